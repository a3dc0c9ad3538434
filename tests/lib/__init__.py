"""The Python test kit of wasd: one copy of every helper the tests share.

    paths      where the source tree, the build and the `wasd` binary are
    wait       wait_for: poll a predicate with a bound
    net        free_port (loopback), http_get
    process    stop_process: stop a child by its PID, with a bound
    certs      generate_certs (`wasd certs generate`), Pki and the openssl helpers
    webhook    Webhook: one `wasd webhook` process (ports, certificates, logs, clients)
    reconciler Reconciler: one `wasd reconciler` process
    manifests  deployment(): the Deployment the tests send; the names wasd derives
    cluster    Env: the test API server + the real webhook + reconcilers
    scripted_webhook  ScriptedWebhook: an in-process TLS admission webhook a test scripts
    chart      render and lint the Helm chart with the real helm
    components bin_dir(), tool(name): the real control plane binaries (scripts/components.sh);
               module_tool(module, name): a tool module of tests/tools (krew)
    promtext   Prometheus text format and the metric tables of docs/metrics.md

Import it as `lib.<module>`: ctest puts tests/ on PYTHONPATH (tests/CMakeLists.txt),
and so do the scripts that run tests by hand (scripts/faults.sh, tools/bench/run.sh).
Standard library only (plus PyYAML for `chart`).
"""
