"""Every message and enum of the Larder protos, and each message's request dict, under one roof.

`from larder_client.messages import Location, LocationDict, MealCategory, MEAL_CATEGORY_LUNCH`.
Generated from proto/ (_gen/messages.py), so it never lags behind; the stubs
come from mypy-protobuf, so mypy and IDEs know every field.
"""
from ._gen.messages import *  # noqa: F403
from ._gen.messages import __all__ as __all__
