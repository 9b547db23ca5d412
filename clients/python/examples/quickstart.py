from datetime import datetime, timedelta, timezone

from larder_client import LarderClient, LarderError, StatusCode, to_datetime
from larder_client.messages import MEAL_CATEGORY_BREAKFAST

with LarderClient("127.0.0.1:7411", timeout=5) as client:   # token= or $LARDER_TOKEN
    for location in client.list_locations().locations:
        print(location.name, location.color_hex)
    room = client.create_location(location={"name": "玄關", "color_hex": "#AABBCC"})
    meal = client.create_meal_record(meal_record={
        "name": "Oatmeal", "calories": 350, "category": MEAL_CATEGORY_BREAKFAST,
        "eaten_at": datetime.now(timezone.utc)})              # a naive datetime is a TypeError
    print(to_datetime(meal.eaten_at).isoformat())             # aware, UTC
    for record in client.iter_meal_records(since=datetime.now(timezone.utc) - timedelta(days=7)):
        print(record.name, record.calories)                   # every page, newest first
    print(client.get_metrics().connections_open)
    client.delete_meal_record(id=meal.id)
    client.delete_location(id=room.id)
    try:
        client.get_location(id=room.id, timeout=0.5)
    except LarderError as e:
        print(e.code is StatusCode.NOT_FOUND, e.message)      # True location "…" not found
