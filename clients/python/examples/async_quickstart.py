import asyncio
from datetime import datetime, timedelta, timezone

from larder_client import AsyncLarderClient


async def main() -> None:
    async with AsyncLarderClient("127.0.0.1:7411", timeout=5) as client:
        locations = await client.list_locations()
        found = await asyncio.gather(*(client.get_location(id=l.id) for l in locations.locations))
        print([l.name for l in found])
        async for meal in client.iter_meal_records(since=datetime.now(timezone.utc) - timedelta(days=1)):
            print(meal.name)


asyncio.run(main())
