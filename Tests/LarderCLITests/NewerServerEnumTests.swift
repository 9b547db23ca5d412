import LarderAPI
import LarderCLI
import LarderWire
import Testing

/// A newer server may send an enum number this build does not know (a new meal category, a new
/// health status). Enums decode open, so the typed commands show it instead of failing the call.
@Suite("Enum numbers from a newer server")
struct NewerServerEnumTests {
    static let meal = MealRecord(id: "6f1c2a9e-4b7d-4c1e-9a2b-3c4d5e6f7a8b", name: "Brunch", calories: 640, category: .unrecognized(77),
                                 eatenAt: Timestamp(seconds: 1_795_000_000))

    @Test("meals get: the table says unknown(77); --json gives the number, as proto3 JSON does")
    func mealGet() async throws {
        let table = try await CLIRunner.run(["meals", "get", "6f1c2a9e-4b7d-4c1e-9a2b-3c4d5e6f7a8b"], replying: Self.meal)
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stdout.contains("unknown(77)"), "\(table.stdout)")

        let json = try await CLIRunner.run(["--json", "meals", "get", "6f1c2a9e-4b7d-4c1e-9a2b-3c4d5e6f7a8b"], replying: Self.meal)
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.stdout.contains("\"category\": 77"), "\(json.stdout)")
    }

    @Test("meals list and summary show the unknown category")
    func listAndSummary() async throws {
        let list = try await CLIRunner.run(["meals", "list"],
                                           replying: ListMealRecordsResponse(mealRecords: [Self.meal]))
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.contains("unknown(77)"), "\(list.stdout)")

        let total = CategoryTotal(category: .unrecognized(77), totalCalories: 640, mealCount: 1)
        let summary = try await CLIRunner.run(
            ["--json", "meals", "summary", "--since", "2026-11-01", "--until", "2026-11-02"],
            replying: SummarizeMealRecordsResponse(categories: [total]))
        #expect(summary.status == 0, "\(summary.stderr)")
        #expect(summary.stdout.contains("\"category\": 77"), "\(summary.stdout)")
    }

    @Test("health: an unknown status is named by its number and exits 1, not SERVING")
    func health() async throws {
        let result = try await CLIRunner.run(["health"], replying: HealthCheckResponse(status: .unrecognized(5)))
        #expect(result.status == ExitCode.notServing)
        #expect(result.stdout == "status 5 (unknown to this larder)\n")

        let json = try await CLIRunner.run(["--json", "health"], replying: HealthCheckResponse(status: .unrecognized(5)))
        #expect(json.status == ExitCode.notServing)
        #expect(json.stdout.contains("\"status\": 5"), "\(json.stdout)")
    }
}
