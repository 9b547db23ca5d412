// requests.h - the larder.v1 request messages the load generator sends, encoded once.
//
// Encoded with the C++ types protoc generates from Larder's own proto/ (larder/v1), and
// chosen so the same bytes are valid for Larder and for the gRPC C++ reference server
// (../shared/anchors/grpc-cpp/anchor.proto, also package larder.v1). The two protos differ:
//   - MealRecord field 5 is `google.protobuf.Timestamp eaten_at` in Larder but
//     `int64 date_unix_ms` in the reference (a different wire type), so create requests
//     leave field 5 unset: both servers then use the time of the call.
//   - Larder's Location and MealRecord have create_time/update_time (4, 5 / 6, 7) and its
//     ListMealRecordsRequest has filters (3-5); the requests here set none of them.
//   - MealCategory values 1-4 mean the same in both (MEAL_CATEGORY_BREAKFAST = BREAKFAST = 1).
//   - List page sizes: both default to 50; the reference allows at most 100, Larder 1000.
#pragma once

#include <cstdint>
#include <string>

namespace grpcload {

/// gRPC method paths (the same in both protos).
inline constexpr const char* kGetLocation = "/larder.v1.LocationService/GetLocation";
inline constexpr const char* kCreateLocation = "/larder.v1.LocationService/CreateLocation";
inline constexpr const char* kCreateMealRecord = "/larder.v1.MealRecordService/CreateMealRecord";
inline constexpr const char* kListMealRecords = "/larder.v1.MealRecordService/ListMealRecords";
/// grpc.health.v1 (Larder and h2-echo; the reference answers UNIMPLEMENTED).
inline constexpr const char* kHealthCheck = "/grpc.health.v1.Health/Check";

/// An id no server holds, for servers that cannot be seeded (h2-echo): a UUIDv4 shape.
inline constexpr const char* kUnseededId = "00000000-0000-4000-8000-000000000000";

/// GetLocationRequest{id}.
std::string EncodeGetLocation(const std::string& id);

/// CreateLocationRequest{location{name, color_hex}}.
std::string EncodeCreateLocation(const std::string& name, const std::string& color_hex);

/// CreateMealRecordRequest{meal_record{name, calories, category 1-4}}; field 5 unset (see above).
std::string EncodeCreateMealRecord(const std::string& name, int32_t calories, int category);

/// ListMealRecordsRequest{page_size}: the first page.
std::string EncodeListMealRecords(int32_t page_size);

/// The id (field 1) of a Location reply; false if the bytes do not parse.
bool DecodeLocationId(const std::string& bytes, std::string* id);

/// A gRPC length-prefixed message: flag 0 (uncompressed), 4-byte big-endian length, the bytes.
std::string GrpcFrame(const std::string& message);

}  // namespace grpcload
