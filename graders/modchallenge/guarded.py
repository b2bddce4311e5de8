"""GUARDED INPUT (a part of grade_modchallenge.py; see CONTRIBUTING.md)."""
# -- end of source-tree preamble: the build keeps only what follows --
def _plain_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def python_source_encoding(data: bytes) -> str:
    """The encoding the interpreter reads `data` in (PEP 263 cookie, UTF-8 BOM, else UTF-8), as
    tokenize.detect_encoding finds it; ValueError when the interpreter itself would refuse the
    file (an unknown codec, a BOM with another cookie, bytes invalid in the encoding)."""
    import codecs
    import io
    import tokenize
    try:
        enc, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = codecs.decode(data, enc)             # strict, as compile() decodes it
    except Exception as exc:                        # any codec's own error (zlib, rot13, ...)
        raise ValueError(f"{type(exc).__name__}: {str(exc)[:120]}")
    if not isinstance(text, str):
        raise ValueError(f"{enc} is not a text encoding")
    return enc


