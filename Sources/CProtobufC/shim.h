#pragma once
#include <protobuf-c/protobuf-c.h>
