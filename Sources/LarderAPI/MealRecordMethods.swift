import CLarderProto
import LarderWire

/// The methods of `larder.v1.MealRecordService`, typed, from its generated descriptor.
public enum MealRecordMethods {
    public static let service = ServiceDescriptor(larder__v1__meal_record_service__descriptor_ptr())
    public static let createMealRecord = RPCMethod<CreateMealRecordRequest, MealRecord>(service, "CreateMealRecord")
    public static let getMealRecord = RPCMethod<GetMealRecordRequest, MealRecord>(service, "GetMealRecord")
    public static let listMealRecords =
        RPCMethod<ListMealRecordsRequest, ListMealRecordsResponse>(service, "ListMealRecords")
    public static let updateMealRecord = RPCMethod<UpdateMealRecordRequest, MealRecord>(service, "UpdateMealRecord")
    public static let deleteMealRecord = RPCMethod<DeleteMealRecordRequest, Empty>(service, "DeleteMealRecord")
    public static let summarizeMealRecords =
        RPCMethod<SummarizeMealRecordsRequest, SummarizeMealRecordsResponse>(service, "SummarizeMealRecords")
}
