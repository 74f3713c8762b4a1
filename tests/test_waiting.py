"""tests/waiting.py's waits hold to the deadline they are given, however slowly the awaited answers."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.waiting import wait_answering

#: a server whose first answer takes longer than a request's usual few seconds, as a freshly
#: started API's may on a busy machine
SLOW_FIRST_ANSWER = """
import http.server, time
class Slow(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        time.sleep(7)
        self.send_response(200)
        self.end_headers()
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Slow)
print(server.server_port, flush=True)
server.handle_request()
"""


@pytest.mark.slow
def test_a_server_answering_slowly_is_waited_for_until_the_deadline():
    proc = subprocess.Popen([sys.executable, "-c", SLOW_FIRST_ANSWER], stdout=subprocess.PIPE, text=True)
    try:
        port = int(proc.stdout.readline())
        wait_answering(f"http://127.0.0.1:{port}/", proc, "the slow server", seconds=60)
    finally:
        proc.kill()
        proc.wait()
