"""A Locust load test of a Larder server: the get/create/list mix.

One machine:

    locust -f clients/python/examples/locustfile.py --headless -u 50 -r 10 -t 1m --host 127.0.0.1:7411

Many machines (docs/LOAD_TESTING.md): one `--master`, any number of
`--worker --master-host MASTER` processes running this same file.

Every call is reported to Locust under its method name
(/larder.v1.MealRecordService/GetMealRecord, ...); a failed call counts as a
failure under its status code (e.g. UNAVAILABLE).
"""
from __future__ import annotations

import random
import uuid

from locust import between, task

from larder_client.locust import LarderUser
from larder_client.messages import MEAL_CATEGORY_BREAKFAST, MEAL_CATEGORY_DINNER, MEAL_CATEGORY_LUNCH, MEAL_CATEGORY_SNACK

CATEGORIES = (MEAL_CATEGORY_BREAKFAST, MEAL_CATEGORY_LUNCH, MEAL_CATEGORY_DINNER, MEAL_CATEGORY_SNACK)
# Each user remembers at most this many of the meals it created, to read them back.
KEEP_IDS = 200


class LarderMix(LarderUser):
    """Reads what it wrote: 60% gets, 20% creates, 20% lists (pages of meals, locations)."""

    wait_time = between(0.0, 0.02)

    def on_start(self) -> None:
        # No call here: an exception in on_start stops the user for the rest of the run. Gets
        # start once the user's first create succeeded.
        self.meal_ids: list[str] = []

    @task(6)
    def get_meal(self) -> None:
        if self.meal_ids:
            self.client.get_meal_record(id=random.choice(self.meal_ids))

    @task(2)
    def create_meal(self) -> None:
        meal = self.client.create_meal_record(meal_record={
            "name": f"locust {uuid.uuid4().hex[:8]}",
            "calories": random.randint(50, 1200),
            "category": random.choice(CATEGORIES),
        })
        self.meal_ids.append(meal.id)
        del self.meal_ids[:-KEEP_IDS]

    @task(1)
    def list_meals(self) -> None:
        self.client.list_meal_records(page_size=20)

    @task(1)
    def list_locations(self) -> None:
        self.client.list_locations()
