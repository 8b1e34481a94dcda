"""A "browser" for sign-in tests: opens the authorization URL, follows the redirect to pi's loopback callback.

Used as ``BROWSER="python fake_browser.py %s"``. Each URL it was given is appended to $FAKE_BROWSER_LOG.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


url = sys.argv[1]
with open(os.environ.get("FAKE_BROWSER_LOG", os.devnull), "a") as log:
    log.write(url + "\n")
if os.environ.get("FAKE_BROWSER_STAY_AWAY"):
    sys.exit(0)  # the user never approves
opener = urllib.request.build_opener(NoRedirect)
try:
    opener.open(url, timeout=10)
    sys.exit("the authorization server did not redirect")
except urllib.error.HTTPError as redirect:
    location = redirect.headers.get("Location")
if not location:
    sys.exit("no redirect location")
with urllib.request.urlopen(location, timeout=10) as response:
    response.read()
