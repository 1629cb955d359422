"""Local Sphinx fixes for the companion's book (loaded via ``sphinx: local_extensions``).

sphinx-thebe adds its inline configuration script (``const THEBE_JS_URL = ...``) with
``app.add_js_file(None, body=...)`` while the documents are read. Sphinx 7.4 stores it in the
builder as filename ``None`` and adds it again from the registry as ``''`` before writing, so
every page declares the constant twice and the browser logs ``SyntaxError: Identifier
'THEBE_JS_URL' has already been declared``. Dropping the builder's copy leaves exactly one.
"""


def _drop_early_inline_scripts(app, env, docnames):
    builder = app.builder
    if hasattr(builder, "_js_files"):
        builder._js_files = [js for js in builder._js_files if not (js.filename is None and "body" in js.attributes)]


def setup(app):
    # after sphinx-thebe's own handler (default priority 500)
    app.connect("env-before-read-docs", _drop_early_inline_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
