import asyncio

from larder_client import AsyncLarderClient, LarderClient, tls_context

ctx = tls_context("ca.pem")  # None: the system trust store; ALPN "larder", TLS 1.2+
with LarderClient("larder.example.com:7411", tls=ctx, token="...") as client:
    print(client.health.check())


async def main() -> None:
    async with AsyncLarderClient("10.0.0.11:7411", tls=ctx, server_hostname="larder.internal") as client:
        print(await client.health.check())


asyncio.run(main())
