"""Shared test helpers: where the read-only reference data lives."""

import subprocess
import sys
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
FIXTURES = SHARED / "fixtures"
DATA = SHARED / "data"


def require(path: Path) -> Path:
    """Skip the calling test cleanly when a shared fixture or data folder is absent."""
    if not path.exists():
        pytest.skip(f"reference data not available: {path}")
    return path


def cached_runs(tmp_path_factory, prefix: str, run):
    """``get(kind, nthresh)``: the output folder of ``run(kind, nthresh, out)``, run once
    per (kind, nthresh) in a module; skips without the official fixtures."""
    require(FIXTURES / "bsr-official")
    cache = {}

    def get(kind, nthresh):
        if (kind, nthresh) not in cache:
            out = tmp_path_factory.mktemp(f"{prefix}{kind}{nthresh}")
            run(kind, nthresh, out)
            cache[kind, nthresh] = out
        return cache[kind, nthresh]
    return get


# --- headless Chromium (the site's and the annotation tool's browser tests) ------------

def _first_file(*candidates):
    import shutil
    return next((p for p in (shutil.which(c) if "/" not in c else c for c in candidates)
                 if p and Path(p).is_file()), None)


CHROMIUM = _first_file("chromium", "/usr/bin/chromium", "chromium-browser")
CHROMEDRIVER = _first_file("chromedriver", "/usr/bin/chromedriver")
#: Mark of a module whose tests need the browser: they skip cleanly without it.
NEEDS_CHROMIUM = pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None,
                                    reason="chromium and chromium-driver are not installed")
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--disable-dev-shm-usage")


def headless_chromium(profile, window: str = "1280,1000"):
    """A selenium Chrome driver on headless Chromium with its own profile folder,
    browser console logged (``driver.get_log('browser')``), 30 s page-load timeout."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS + (f"--window-size={window}", f"--user-data-dir={profile}"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=opts, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(30)
    return driver


def run_command_modules(args, env=None) -> tuple[str, set[str]]:
    """Run ``segbench.cli.main(args)`` in a fresh interpreter: its stdout, and the
    modules imported by its end (what a command's start-up costs)."""
    code = ("import sys\nfrom segbench.cli import main\n"
            f"rc = main({args!r})\nassert rc == 0, rc\n"
            "print('MODULES', ' '.join(sorted(sys.modules)))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("MODULES "))
    return proc.stdout, set(line.split()[1:])
