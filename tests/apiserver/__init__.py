"""A test API server that behaves like kube-apiserver for the parts wasd and kubectl use.

Run it with `python3 -m apiserver --dir DIR` from the tests/ folder (see README.md),
or start it from Python through `apiserver.harness`.
"""
