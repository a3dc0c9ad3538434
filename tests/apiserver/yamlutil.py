"""YAML loading with YAML 1.2 booleans (only true/false), as Kubernetes' decoder reads
YAML; PyYAML's default YAML 1.1 rules would turn keys like `y` or `on` into booleans.
Pure; thread-safe."""
import json
import re

import yaml


class _Loader(yaml.SafeLoader):
    pass


_Loader.yaml_implicit_resolvers = {k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:bool"]
                                   for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                              list("tTfF"))


def Load(text):
    """JSON if it parses as JSON, else YAML 1.2-style."""
    try:
        return json.loads(text)
    except ValueError:
        return yaml.load(text, Loader=_Loader)
