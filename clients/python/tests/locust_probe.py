"""Run by test_locust.py in a subprocess (importing locust monkey-patches the process with gevent).

argv[1] = fake server address. Prints one line per reported request: type name length failed.
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
        self.client.location_service.list_locations()


env = Environment(user_classes=[Probe])
env.events.request.add_listener(
    lambda request_type, name, response_time, response_length, exception, **_: print(
        request_type, name, response_length, type(exception).__name__ if exception else "-",
        "ms-ok" if response_time >= 0 else "ms-bad"))
user = Probe(env)
user.client.call("/test/Echo", b"12345")
try:
    user.client.list_locations()
except LarderError as e:
    print("raised", e.code.name)
user.on_stop()
