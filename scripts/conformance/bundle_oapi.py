#!/usr/bin/env python3
"""Bundles the Beacon API's OpenAPI document into one JSON file.

The ethereum/beacon-APIs repository splits its document over many YAML files joined by relative
`$ref`s (`./apis/...`, `../../beacon-node-oapi.yaml#/components/...`, `../primitive.yaml#/Uint64`).
Schemathesis (and most tools) want one document. This script:

- keeps a reference to the root document's own components (`#/components/...`) as an internal
  reference;
- turns a reference to a schema in a `types/` file into `#/components/schemas/<name>`: the name
  the root document already gives that target when it has one, else one made from the file and
  pointer, added to `components/schemas` once (so shared and recursive types stay shared);
- inlines every other external reference (path items, parameters, responses, headers), resolved
  relative to the file it appears in.

Usage: bundle_oapi.py BEACON_APIS_DIR OUT.json
"""

import json
import os
import re
import sys

import yaml

_cache = {}


def load(path):
    path = os.path.normpath(path)
    if path not in _cache:
        with open(path, encoding="utf-8") as f:
            _cache[path] = yaml.safe_load(f)
    return _cache[path]


def pointer_get(doc, pointer):
    node = doc
    if pointer in ("", "/"):
        return node
    for part in pointer.lstrip("/").split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list):
            node = node[int(part)]
        else:
            node = node[part]
    return node


class Bundler:
    def __init__(self, root_dir):
        self.root_dir = os.path.abspath(root_dir)
        self.root_path = os.path.join(self.root_dir, "beacon-node-oapi.yaml")
        self.root = load(self.root_path)
        self.schemas = {}
        self.names = {}  # (file, pointer) -> component name
        # The root's own aliases: components/schemas/X: {$ref: file#ptr}.
        for section in ("schemas",):
            for name, value in (self.root.get("components", {}).get(section) or {}).items():
                if isinstance(value, dict) and set(value) == {"$ref"}:
                    target = self.split(value["$ref"], self.root_path)
                    self.names.setdefault(target, name)

    def split(self, ref, base_file):
        file_part, _, pointer = ref.partition("#")
        target_file = (
            os.path.normpath(os.path.join(os.path.dirname(base_file), file_part))
            if file_part
            else os.path.normpath(base_file)
        )
        return target_file, pointer

    def component_name(self, target):
        if target in self.names:
            return self.names[target]
        file, pointer = target
        rel = os.path.relpath(file, os.path.join(self.root_dir, "types"))
        stem = re.sub(r"\.ya?ml$", "", rel).replace(os.sep, ".")
        name = stem + "." + pointer.strip("/").replace("/", ".")
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
        self.names[target] = name
        return name

    def resolve(self, node, base_file, stack=()):
        if isinstance(node, list):
            return [self.resolve(item, base_file, stack) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node and isinstance(node["$ref"], str):
            target = self.split(node["$ref"], base_file)
            extra = {k: v for k, v in node.items() if k != "$ref"}
            file, pointer = target
            if file == os.path.normpath(self.root_path) and pointer.startswith("/components/"):
                if extra and not pointer.startswith("/components/schemas/"):
                    # A parameter, response or header reference with siblings (`name`, `in`):
                    # OpenAPI ignores siblings of a reference, so inline the target under them.
                    resolved = self.resolve(pointer_get(self.root, pointer), self.root_path, stack)
                    return {**resolved, **self.resolve(extra, base_file, stack)}
                out = {"$ref": "#" + pointer}
            elif file.startswith(os.path.join(self.root_dir, "types") + os.sep):
                name = self.component_name(target)
                if name not in self.schemas:
                    self.schemas[name] = None  # placeholder: recursion stays a reference
                    self.schemas[name] = self.resolve(pointer_get(load(file), pointer), file, stack)
                out = {"$ref": "#/components/schemas/" + name}
            else:
                if target in stack:
                    raise SystemExit(f"recursive inline reference {node['$ref']} in {base_file}")
                out = self.resolve(pointer_get(load(file), pointer), file, stack + (target,))
            if extra:
                if "$ref" in out:
                    out = {"allOf": [out], **self.resolve(extra, base_file, stack)}
                else:
                    out = {**out, **self.resolve(extra, base_file, stack)}
            return out
        return {k: self.resolve(v, base_file, stack) for k, v in node.items()}

    def bundle(self):
        doc = self.resolve(self.root, self.root_path)
        components = doc.setdefault("components", {})
        schemas = components.setdefault("schemas", {})
        for name, value in self.schemas.items():
            if name in schemas and schemas[name] != {"$ref": "#/components/schemas/" + name}:
                continue
            schemas[name] = value
        # A root alias that pointed at a types file now points at itself: give it the body.
        for name, value in list(schemas.items()):
            if value == {"$ref": "#/components/schemas/" + name}:
                schemas[name] = self.schemas[name]
        return doc


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    doc = Bundler(sys.argv[1]).bundle()
    text = json.dumps(doc, indent=1, sort_keys=False)
    if "../" in text and '"$ref": "../' in text:
        raise SystemExit("an external reference was left in the bundle")
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write(text)
    paths = doc.get("paths", {})
    ops = sum(1 for p in paths.values() for m in p if m in ("get", "post", "put", "delete", "patch"))
    print(f"bundled {len(paths)} paths, {ops} operations, {len(doc['components']['schemas'])} schemas")


if __name__ == "__main__":
    main()
