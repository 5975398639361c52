"""The `parse` op: Python's own ast of a source text, as JSON with exact positions.

Every node is {"_t": class name, "_p": [line, col, end_line, end_col], <fields>}.
Lines are 1-based; columns are byte offsets into the UTF-8 line (Python's convention),
so the C++ side can slice the exact text. Constants carry "value" and "vt" (value type);
non-finite floats and big integers are strings with "vt" saying so.
"""

import ast

_INT64_MAX = 2**63 - 1


def _constant(node):
    v = node.value
    out = {"_t": "Constant"}
    if v is None:
        out.update(value=None, vt="None")
    elif isinstance(v, bool):
        out.update(value=v, vt="bool")
    elif isinstance(v, int):
        if -_INT64_MAX <= v <= _INT64_MAX:
            out.update(value=v, vt="int")
        else:
            out.update(value=str(v), vt="bigint")
    elif isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            out.update(value=repr(v), vt="float_special")
        else:
            out.update(value=v, vt="float")
    elif isinstance(v, str):
        out.update(value=v, vt="str")
    elif isinstance(v, bytes):
        out.update(value=v.decode("latin-1"), vt="bytes")
    elif isinstance(v, complex):
        out.update(value=repr(v), vt="complex")
    elif v is Ellipsis:
        out.update(value="...", vt="Ellipsis")
    else:
        out.update(value=repr(v), vt=type(v).__name__)
    return out


def to_json(node):
    if isinstance(node, ast.AST):
        if isinstance(node, ast.Constant):
            d = _constant(node)
        elif isinstance(node, ast.expr_context):
            return type(node).__name__
        else:
            d = {"_t": type(node).__name__}
            for field in node._fields:
                d[field] = to_json(getattr(node, field, None))
        if hasattr(node, "lineno") and node.lineno is not None:
            d["_p"] = [node.lineno, node.col_offset, node.end_lineno, node.end_col_offset]
        return d
    if isinstance(node, list):
        return [to_json(x) for x in node]
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    return repr(node)


class ParseFailure(Exception):
    def __init__(self, message, data):
        super().__init__(message)
        self.tf_data = data


def op_parse(args):
    text = args["text"]
    filename = args.get("filename", "<source>")
    try:
        tree = ast.parse(text, filename=filename, type_comments=False)
    except SyntaxError as exc:
        err = ParseFailure(exc.msg or "invalid syntax", {
            "line": exc.lineno or 0,
            "col": exc.offset or 0,
            "text": (exc.text or "").rstrip("\n"),
        })
        raise err from None
    except ValueError as exc:  # e.g. null bytes
        raise ParseFailure(str(exc), {"line": 0, "col": 0, "text": ""}) from None
    return {"ast": to_json(tree)}
