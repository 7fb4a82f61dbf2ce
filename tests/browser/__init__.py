"""Pages tested in a real browser: Debian's Chromium driven by Playwright (never a downloaded browser).

Browser tests are plain (sync) test functions that take the ``browser`` fixture (one Chromium per test
module) and open pages with ``new_page``; screenshots go to ``test-artifacts/`` (not committed). Without
Chromium or Playwright they skip with the reason, unless ``MNEMOGATE_TEST_BROWSER=required`` (``.ci/run``
sets it), which fails them instead so CI can never pass by skipping.
"""
