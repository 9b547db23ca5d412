// requests.cc - see requests.h.
#include "requests.h"

#include "larder/v1/location.pb.h"
#include "larder/v1/meal_record.pb.h"

namespace grpcload {

std::string EncodeGetLocation(const std::string& id) {
  larder::v1::GetLocationRequest req;
  req.set_id(id);
  return req.SerializeAsString();
}

std::string EncodeCreateLocation(const std::string& name, const std::string& color_hex) {
  larder::v1::CreateLocationRequest req;
  req.mutable_location()->set_name(name);
  req.mutable_location()->set_color_hex(color_hex);
  return req.SerializeAsString();
}

std::string EncodeCreateMealRecord(const std::string& name, int32_t calories, int category) {
  larder::v1::CreateMealRecordRequest req;
  larder::v1::MealRecord* m = req.mutable_meal_record();
  m->set_name(name);
  m->set_calories(calories);
  m->set_category(static_cast<larder::v1::MealCategory>(category));
  return req.SerializeAsString();
}

std::string EncodeListMealRecords(int32_t page_size) {
  larder::v1::ListMealRecordsRequest req;
  req.set_page_size(page_size);
  return req.SerializeAsString();
}

bool DecodeLocationId(const std::string& bytes, std::string* id) {
  larder::v1::Location loc;
  if (!loc.ParseFromString(bytes)) return false;
  *id = loc.id();
  return !id->empty();
}

std::string GrpcFrame(const std::string& message) {
  const auto n = static_cast<uint32_t>(message.size());
  std::string out;
  out.reserve(5 + message.size());
  out.push_back('\0');
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((n >> shift) & 0xFF));
  out += message;
  return out;
}

}  // namespace grpcload
