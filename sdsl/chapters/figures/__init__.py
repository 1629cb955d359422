"""The drawing of the chapters' figures, one module per chapter that has many (same stem as the
chapter). Each chapter module re-exports its figure functions, so that
``sdsl.chapters.<chapter>.figure1`` is the function the registry and the notebook call."""
