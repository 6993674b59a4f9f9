"""A pytest plugin that records the lines detect-secrets' own plugin tests feed
its detectors, and whether the detector reported a secret.

Used by `scripts/bench_guard.py extract`: run detect-secrets' tests/plugins
with `-p ds_harvest_plugin`; the tests pass only when every asserted verdict is
the expected one, so each recorded (line, flagged) is a labelled case.
"""

import inspect
import json
import os

import pytest

RECORDS = []
_CURRENT = {'nodeid': None}


def _wrap(cls, name):
    original = cls.__dict__[name]

    def wrapper(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        line = kwargs.get('line', args[1] if len(args) > 1 else None)
        filename = kwargs.get('filename', args[0] if args else '')
        if isinstance(line, str):
            out = result if isinstance(result, (set, list, dict)) else list(result or [])
            result = out
            RECORDS.append({
                'test': _CURRENT['nodeid'],
                'plugin': type(self).__name__,
                'filename': filename,
                'line': line,
                'flagged': bool(out),
            })
        return result

    setattr(cls, name, wrapper)


def pytest_configure(config):
    import detect_secrets.plugins as plugins_pkg
    from detect_secrets.plugins.base import BasePlugin
    from detect_secrets.util.importlib import get_modules_from_package

    seen = set()
    for module in get_modules_from_package(plugins_pkg):
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, BasePlugin) and cls not in seen:
                seen.add(cls)
    seen.add(BasePlugin)
    for cls in seen:
        if 'analyze_line' in cls.__dict__:
            _wrap(cls, 'analyze_line')


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    _CURRENT['nodeid'] = item.nodeid
    outcome = yield
    passed = outcome.excinfo is None
    for r in RECORDS:
        if r['test'] == item.nodeid and 'passed' not in r:
            r['passed'] = passed


def pytest_unconfigure(config):
    path = os.environ.get('DS_HARVEST_OUT')
    if path:
        with open(path, 'w') as f:
            for r in RECORDS:
                f.write(json.dumps(r) + '\n')
