"""fio's JSON against ddbench's: every key path with its type, and where the
two differ (issue 27). Imported by ddbench_fio_json.sh and fio_both.sh."""


def paths(v, path="", out=None):
    """Every key path of a JSON value with its type; json+'s bins keys as '*'."""
    out = {} if out is None else out
    if isinstance(v, dict):
        out[path] = "object"
        for k, x in v.items():
            paths(x, f"{path}.{'*' if path.endswith('.bins') else k}", out)
    elif isinstance(v, list):
        out[path] = "array"
        for x in v:
            paths(x, path + "[]", out)
    else:
        out[path] = {bool: "bool", int: "int", float: "float", str: "str"}[type(v)]
    return out


def omitted(path):
    """The paths fio_json_omitted.txt lists (what ddbench leaves out, with why)."""
    return {l.split("\t")[0] for l in open(path) if l.strip() and not l.startswith("#")}


def differences(fio, dd, left_out):
    """What fio has and ddbench not (unless listed in left_out), what ddbench
    has and fio not (but its own "ddbench" object), and types that differ."""
    fk, dk = paths(fio), paths(dd)
    bad = []
    for k in sorted(set(fk) | set(dk)):
        if k not in dk and k not in left_out:
            bad.append(f"fio has {k} ({fk[k]}), ddbench does not, and fio_json_omitted.txt does not say why")
        elif k not in fk and not k.startswith(".jobs[].ddbench"):
            bad.append(f"ddbench has {k} ({dk[k]}), fio does not")
        elif k in fk and k in dk and fk[k] != dk[k]:
            bad.append(f"{k}: ddbench {dk[k]}, fio {fk[k]}")
    return bad
