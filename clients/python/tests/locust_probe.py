"""Run by test_locust.py in a subprocess (importing locust monkey-patches the process with gevent).

argv[1] = fake server address, argv[2] = an address that refuses connections. Prints one line
per reported request: type name length failure ms-ok|ms-bad, and one per error a call raised.
"""
import sys

from locust import task
from locust.env import Environment

from larder_client import LarderError
from larder_client.locust import LarderUser


class Probe(LarderUser):
    host = sys.argv[1]

    @task
    def work(self):
        self.client.call("/test/Echo", b"12345")


class Detailed(Probe):
    failure_detail = True


class Refused(Probe):
    host = sys.argv[2]
    failure_detail = True


def describe(exception):
    return f"{type(exception).__name__}:{exception}" if exception else "-"


env = Environment(user_classes=[Probe])
env.events.request.add_listener(
    lambda request_type, name, response_time, response_length, exception, **_: print(
        request_type, name, response_length, describe(exception), "ms-ok" if response_time >= 0 else "ms-bad"))
user = Probe(env)
user.client.call("/test/Echo", b"12345")
for call in (lambda: user.client.list_locations(), lambda: user.client.call("/test/Status", b"5"),
             lambda: Detailed(env).client.call("/test/Status", b"5"), lambda: user.client.call("/test/Echo", object())):
    try:
        call()
    except LarderError as e:
        print("raised", e.code.name)
    except Exception as e:
        print("raised", type(e).__name__)
user.on_stop()
# A server that refuses connections: the user is made (it connects on its first call), and that
# call fails and is reported.
# The second call, made at once, waits out the reconnect backoff and tries again (it does not
# fail at once with "next connection attempt in ...").
refused = Refused(env)
for _ in range(2):
    try:
        refused.client.call("/test/Echo", b"1")
    except LarderError as e:
        print("raised", e.code.name, "backoff" if "next connection attempt" in e.message else "attempted")
refused.on_stop()
