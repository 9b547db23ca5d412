import LarderAPI
import LarderJSON
import LarderWire
import Testing

@Suite("ProtoJSON errors name the field")
struct ProtoJSONErrorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let type: String
        let json: String
        let message: String
        var testDescription: String { "\(type) \(json)" }
    }

    static let cases: [Case] = [
        Case(type: "larder.v1.CreateLocationRequest", json: #"{"location": {"colorHex": 5}}"#,
             message: "location.colorHex: expected a string, got number"),
        Case(type: "larder.v1.CreateLocationRequest", json: ##"{"location": {"colour": "#FFFFFF"}}"##,
             message: "location.colour: unknown field; larder.v1.Location has id, name, colorHex, createTime, updateTime"),
        Case(type: "larder.v1.CreateLocationRequest", json: #"{"location": []}"#,
             message: "location: expected an object (larder.v1.Location), got array"),
        Case(type: "larder.v1.GetLocationRequest", json: #"[]"#,
             message: "(larder.v1.GetLocationRequest): expected an object (larder.v1.GetLocationRequest), got array"),
        Case(type: "larder.v1.GetLocationRequest", json: #"{"id": "a", "id": "b"}"#,
             message: "id: field given twice (also as \"id\")"),
        Case(type: "larder.v1.MealRecord", json: #"{"eatenAt": "2026-11-30T08:00:00", "eaten_at": null}"#,
             message: "eatenAt: \"2026-11-30T08:00:00\" is not an RFC 3339 timestamp such as 2026-11-30T08:00:00Z (years 0001-9999, offset Z or ±HH:MM)"),
        Case(type: "larder.v1.MealRecord", json: #"{"eatenAt": "2026-02-29T08:00:00Z"}"#,
             message: "eatenAt: \"2026-02-29T08:00:00Z\" is not an RFC 3339 timestamp such as 2026-11-30T08:00:00Z (years 0001-9999, offset Z or ±HH:MM)"),
        Case(type: "larder.v1.MealRecord", json: #"{"calories": 1.5}"#,
             message: "calories: 1.5 is not an integer (int32)"),
        Case(type: "larder.v1.MealRecord", json: #"{"calories": 3000000000}"#,
             message: "calories: 3000000000 is out of range for int32"),
        Case(type: "larder.v1.MealRecord", json: #"{"calories": "lots"}"#,
             message: "calories: \"lots\" is not an integer (int32)"),
        Case(type: "larder.v1.MealRecord", json: #"{"calories": true}"#,
             message: "calories: expected an integer (int32), got boolean"),
        Case(type: "larder.v1.MealRecord", json: #"{"category": "BRUNCH"}"#,
             message: "category: unknown larder.v1.MealCategory value \"BRUNCH\"; expected one of MEAL_CATEGORY_UNSPECIFIED, MEAL_CATEGORY_BREAKFAST, MEAL_CATEGORY_LUNCH, MEAL_CATEGORY_DINNER, MEAL_CATEGORY_SNACK"),
        Case(type: "larder.v1.MealRecord", json: #"{"name": "a\u0000b"}"#,
             message: "name: strings may not contain NUL (\\u0000)"),
        Case(type: "larder.v1.ListLocationsResponse", json: #"{"locations": [{}, {"name": 1}]}"#,
             message: "locations[1].name: expected a string, got number"),
        Case(type: "larder.v1.ListLocationsResponse", json: #"{"locations": {}}"#,
             message: "locations: expected an array, got object"),
        Case(type: "larder.v1.ListLocationsResponse", json: #"{"locations": [null]}"#,
             message: "locations[0]: expected a value, got null"),
        Case(type: "larder.v1.GetCategoryGroupRequest", json: #"{"includeItemCategories": "yes"}"#,
             message: "includeItemCategories: expected true or false, got string"),
        Case(type: "larder.v1.SummarizeMealRecordsResponse", json: #"{"totalCalories": "9223372036854775808"}"#,
             message: "totalCalories: 9223372036854775808 is out of range for int64"),
        Case(type: "larder.rpc.v1.RequestEnvelope", json: #"{"payload": "not base64!"}"#,
             message: "payload: \"not base64!\" is not base64"),
        Case(type: "larder.rpc.v1.RequestEnvelope", json: #"{"metadata": {"k": 1}}"#,
             message: "metadata[\"k\"]: expected a string, got number"),
        Case(type: "larder.rpc.v1.RequestEnvelope", json: #"{"callId": -1}"#,
             message: "callId: -1 is out of range for uint64"),
        Case(type: "larder.v1.UpdateLocationRequest", json: #"{"updateMask": ["name"]}"#,
             message: "updateMask: expected a string of comma-separated field paths, got array"),
        Case(type: "larder.v1.UpdateLocationRequest", json: #"{"updateMask": "name,,colorHex"}"#,
             message: "updateMask: \"name,,colorHex\" has an empty field path"),
        Case(type: "larder.reflection.v1.DescribeTypeResponse", json: #"{"messageType": {}, "enumType": {}}"#,
             message: "enumType: only one field of a oneof may be set, \"messageType\" is set already"),
        Case(type: "larder.v1.GetLocationRequest", json: "{\"id\": \"a\",\n  \"x\" 1}",
             message: "invalid JSON at line 2, column 7: expected ':' after member name \"x\""),
    ]

    @Test(arguments: cases)
    func rejects(_ testCase: Case) throws {
        let type = try #require(DescriptorCatalog.compiled.message(named: testCase.type))
        do {
            _ = try ProtoJSON.binary(fromJSON: testCase.json, type: type)
            Issue.record("accepted \(testCase.json)")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message == testCase.message)
        }
    }

    @Test func invalidUTF8InABinaryStringIsNamed() throws {
        // Location{name: 0xFF}
        let type = Location.descriptor
        do {
            _ = try ProtoJSON.json(fromBinary: [0x12, 0x01, 0xFF], type: type)
            Issue.record("accepted invalid UTF-8")
        } catch {
            #expect(error == RPCError.invalidArgument("name: string is not valid UTF-8"))
        }
    }

    @Test func garbageBytesAreInvalidArgument() {
        #expect(throws: RPCError.invalidArgument("payload is not a valid larder.v1.Location message")) {
            try ProtoJSON.json(fromBinary: [0xFF, 0xFF, 0xFF], type: Location.descriptor)
        }
    }
}
