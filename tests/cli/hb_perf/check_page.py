#!/usr/bin/env python3
"""Opens a static HTML page in headless Chromium and checks it as a user's browser shows it.

Talks to Chromium over the DevTools protocol on a pipe (--remote-debugging-pipe: JSON messages
separated by NUL bytes on file descriptors 3 and 4), with Python's standard library only.
Fails (exit 1, a line per problem) when the page logs a console error or an uncaught exception,
a resource fails to load, or an image is not shown (not complete, or zero natural width).
Prints the number of images shown.
    check_page.py CHROMIUM PAGE.html
"""
import json
import os
import subprocess
import sys
import time

chromium, page = sys.argv[1], os.path.abspath(sys.argv[2])
to_chrome_r, to_chrome_w = os.pipe()
from_chrome_r, from_chrome_w = os.pipe()


def child_fds():
    read, write = os.dup(to_chrome_r), os.dup(from_chrome_w)  # above 4, whatever the pipes got
    os.dup2(read, 3)
    os.dup2(write, 4)


proc = subprocess.Popen(
    [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--remote-debugging-pipe",
     "--user-data-dir=" + os.path.join(os.path.dirname(page), ".chromium-profile"), "about:blank"],
    preexec_fn=child_fds, pass_fds=(3, 4), stdout=subprocess.DEVNULL,
    stderr=None if os.environ.get("CHECK_PAGE_VERBOSE") else subprocess.DEVNULL)
os.close(to_chrome_r)
os.close(from_chrome_w)
out, inbox, buffer, next_id = os.fdopen(to_chrome_w, "wb"), os.fdopen(from_chrome_r, "rb"), b"", 0
problems, deadline = [], time.time() + 60


def receive():
    global buffer
    while b"\0" not in buffer:
        if time.time() > deadline:
            sys.exit("check_page: Chromium did not answer within 60 s")
        chunk = os.read(inbox.fileno(), 65536)
        if not chunk:
            sys.exit("check_page: Chromium closed the pipe")
        buffer += chunk
    message, buffer = buffer.split(b"\0", 1)
    return json.loads(message)


def note(event):
    method, params = event.get("method"), event.get("params", {})
    if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
        problems.append("console error: " + json.dumps(params.get("args")))
    elif method == "Runtime.exceptionThrown":
        problems.append("exception: " + json.dumps(params.get("exceptionDetails", {}).get("text")))
    elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
        problems.append("log error: " + params["entry"].get("text", "") + " " + params["entry"].get("url", ""))


def call(method, params=None, session=None, until=None):
    """Sends a command; returns its result, after the event `until` when given."""
    global next_id
    next_id += 1
    message = {"id": next_id, "method": method, "params": params or {}}
    if session:
        message["sessionId"] = session
    out.write(json.dumps(message).encode() + b"\0")
    out.flush()
    result, seen = None, until is None
    while result is None or not seen:
        m = receive()
        if m.get("id") == next_id:
            if "error" in m:
                sys.exit("check_page: %s failed: %s" % (method, m["error"]))
            result = m["result"]
        else:
            note(m)
            seen = seen or m.get("method") == until
    return result


target = call("Target.createTarget", {"url": "about:blank"})["targetId"]
session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
for domain in ("Runtime", "Log", "Page"):
    call(domain + ".enable", session=session)
call("Page.navigate", {"url": "file://" + page}, session=session, until="Page.loadEventFired")
shown = call("Runtime.evaluate", {"expression": "JSON.stringify(Array.from(document.images).map("
                                  "i => [i.getAttribute('src'), i.complete && i.naturalWidth > 0]))",
                                  "returnByValue": True}, session=session)["result"]["value"]
for src, ok in json.loads(shown):
    if not ok:
        problems.append("image not shown: " + src)
call("Browser.close")
proc.wait(timeout=30)
for p in problems:
    print("check_page:", p)
print("check_page: %d image(s) shown" % sum(ok for _, ok in json.loads(shown)))
sys.exit(1 if problems else 0)
