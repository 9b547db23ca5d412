/// What kind of call the bench makes.
public enum Workload: String, CaseIterable, Sendable {
    /// `/grpc.health.v1.Health/Check`: no database.
    case ping
    /// GetLocation by a random id among locations created before the run.
    case get
    /// CreateMealRecord.
    case create
    /// ListMealRecords, first page of 50, after creating 500 meal records.
    case list
    /// A weighted mix of the others (`--mix`).
    case mix
    /// Any method with a templated JSON request (`--call`, `--data`).
    case call
}
