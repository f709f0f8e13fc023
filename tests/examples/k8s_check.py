"""A Kubernetes manifest checked against the API's own models (the `kubernetes` package from
PyPI): every field must be one the model of its place has, with a value of its type, and the
document must deserialize into that model. Prints the model's name, or the problems.

    k8s_check.py MANIFEST.yaml
"""

import datetime
import json
import sys

import yaml
from kubernetes import client

PRIMITIVES = {
    "str": str,
    "int": int,
    "bool": bool,
    "float": (int, float),
    "object": object,
    "datetime": (str, datetime.datetime),
    "date": (str, datetime.date),
}


def check(value, kind, where, problems):
    """Check a value against a model type name ('V1Job', 'List[V1Container]',
    'Dict[str, str]', 'str', ...)."""
    if kind.startswith(("list[", "List[")):
        if not isinstance(value, list):
            problems.append(f"{where}: expected a list")
            return
        for i, item in enumerate(value):
            check(item, kind[5:-1], f"{where}[{i}]", problems)
        return
    if kind.startswith(("dict(", "Dict[")):
        if not isinstance(value, dict):
            problems.append(f"{where}: expected a map")
            return
        inner = kind[5:-1].split(", ", 1)[1]
        for k, v in value.items():
            check(v, inner, f"{where}.{k}", problems)
        return
    if kind in PRIMITIVES:
        if not isinstance(value, PRIMITIVES[kind]) or (kind == "int" and isinstance(value, bool)):
            problems.append(f"{where}: expected {kind}, got {value!r}")
        return
    model = getattr(client, kind)
    if not isinstance(value, dict):
        problems.append(f"{where}: expected a {kind} object")
        return
    fields = {json_name: attr for attr, json_name in model.attribute_map.items()}
    for key, item in value.items():
        if key not in fields:
            problems.append(f"{where}.{key}: no such field in {kind}")
            continue
        check(item, model.openapi_types[fields[key]], f"{where}.{key}", problems)


def main(path):
    with open(path) as f:
        doc = yaml.safe_load(f)
    kind = "V1" + doc["kind"]
    problems = []
    check(doc, kind, doc["kind"], problems)
    # The model's own reading of the document: a value it cannot take raises here.
    client.ApiClient().deserialize(json.dumps(doc), kind, "application/json")
    print(json.dumps({"model": kind, "problems": problems}))


if __name__ == "__main__":
    main(sys.argv[1])
