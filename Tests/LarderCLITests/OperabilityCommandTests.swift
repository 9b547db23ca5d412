import LarderAPI
import LarderCLI
import LarderWire
import Testing

@Suite("call, describe and stats: parsing and rendering")
struct OperabilityCommandTests {
    let parser = ArgumentParser(catalog: .larder)

    @Test func callTakesAnOptionalJSONArgument() throws {
        for arguments in [["call", "/larder.v1.LocationService/ListLocations"],
                          ["call", "/larder.v1.LocationService/GetLocation", "{\"id\": \"x\"}"],
                          ["call", "/larder.v1.LocationService/GetLocation", "-", "--emit-defaults"]] {
            guard case .run(let command, _) = try parser.parse(arguments) else {
                Issue.record("\(arguments) did not parse as a command")
                continue
            }
            #expect(command.spec.path == "call")
            #expect(command.positionals == Array(arguments.dropFirst().prefix { $0 != "--emit-defaults" }))
        }
        #expect(throws: CLIError.usage("unexpected argument 'extra'", command: "larder call")) {
            try parser.parse(["call", "/a/B", "{}", "extra"])
        }
        #expect(throws: CLIError.usage("missing METHOD", command: "larder call")) { try parser.parse(["call"]) }
        let spec = try #require(CommandCatalog.larder.command(named: "call"))
        #expect(Usage.synopsis(spec) == "larder call METHOD [JSON] [-d JSON] [--emit-defaults]")
    }

    @Test func describeRendersMapsLabelsOneofsAndJSONNames() {
        let key = FieldInfo(name: "key", jsonName: "key", number: 1, type: .string, label: .singular)
        let value = FieldInfo(name: "value", jsonName: "value", number: 2, type: .message, label: .singular,
                              typeName: "larder.v1.Location")
        let message = MessageType(name: "larder.test.v1.Box", fields: [
            FieldInfo(name: "by_name", jsonName: "byName", number: 1, type: .message, label: .repeated,
                      typeName: "larder.test.v1.Box.ByNameEntry", mapKey: key, mapValue: value),
            FieldInfo(name: "tags", jsonName: "tags", number: 2, type: .string, label: .repeated),
            FieldInfo(name: "count", jsonName: "count", number: 3, type: .uint64, label: .optional),
            FieldInfo(name: "kind", jsonName: "kind", number: 4, type: .enum, label: .singular,
                      typeName: "larder.v1.MealCategory", inOneof: true),
        ])
        #expect(ProtoSource.type(DescribeTypeResponse(type: .messageType(message))) == """
            larder.test.v1.Box is a message:
            message Box {
              map<string, .larder.v1.Location> by_name = 1;  // JSON: byName
              repeated string tags = 2;
              optional uint64 count = 3;
              .larder.v1.MealCategory kind = 4;  // in a oneof
            }

            """)
    }

    @Test func theGeneratedIndexListsEveryStreamingMethodOfProto() {
        #expect(APIStreamingMethods.all == [
            HealthMethods.watch.path: StreamingSides(client: false, server: true),
            GrpcReflectionV1ServerReflectionMethods.serverReflectionInfo.path: StreamingSides(client: true, server: true),
            GrpcReflectionV1alphaServerReflectionMethods.serverReflectionInfo.path: StreamingSides(client: true, server: true),
        ])
    }

    @Test func describeAndMethodsSayStreamWhereAMethodStreams() {
        let check = MethodInfo(name: "Check", fullName: "/grpc.health.v1.Health/Check",
                               inputType: "grpc.health.v1.HealthCheckRequest", outputType: "grpc.health.v1.HealthCheckResponse")
        let watch = MethodInfo(name: "Watch", fullName: "/grpc.health.v1.Health/Watch",
                               inputType: "grpc.health.v1.HealthCheckRequest", outputType: "grpc.health.v1.HealthCheckResponse")
        let health = ServiceInfo(name: "grpc.health.v1.Health", methods: [check, watch])
        #expect(ProtoSource.service(health) == """
            grpc.health.v1.Health is a service:
            service Health {
              rpc Check ( .grpc.health.v1.HealthCheckRequest ) returns ( .grpc.health.v1.HealthCheckResponse );
              rpc Watch ( .grpc.health.v1.HealthCheckRequest ) returns ( stream .grpc.health.v1.HealthCheckResponse );
            }
            stream: streaming, over gRPC (HTTP/2) only; larder call gets UNIMPLEMENTED

            """)
        let info = MethodInfo(name: "ServerReflectionInfo", fullName: "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
                              inputType: "grpc.reflection.v1.ServerReflectionRequest",
                              outputType: "grpc.reflection.v1.ServerReflectionResponse")
        let reflection = ServiceInfo(name: "grpc.reflection.v1.ServerReflection", methods: [info])
        #expect(ProtoSource.method(info, of: reflection).contains(
            "rpc ServerReflectionInfo ( stream .grpc.reflection.v1.ServerReflectionRequest ) "
                + "returns ( stream .grpc.reflection.v1.ServerReflectionResponse );\n"))
        let table = ProtoSource.methodTable([health])
        #expect(table.contains("/grpc.health.v1.Health/Watch  grpc.health.v1.HealthCheckRequest  stream grpc.health.v1.HealthCheckResponse"))
        #expect(table.hasSuffix("stream: streaming, over gRPC (HTTP/2) only; larder call gets UNIMPLEMENTED\n"))
        let unary = ProtoSource.methodTable([ServiceInfo(name: "grpc.health.v1.Health", methods: [check])])
        #expect(!unary.contains("stream"))
    }

    @Test func statsShowsBucketBoundsForQuantiles() throws {
        let bounds = [0.001, 0.01, 0.1]
        let method = MethodMetrics(method: "/a.B/C", callsByCode: ["OK": 999_998, "NOT_FOUND": 2],
                                   latencyBucketCounts: [500_000, 480_000, 10_000, 10_000], latencySumSeconds: 5000)
        let text = StatsOutput.render(Metrics(connectionsOpen: 2, connectionsAccepted: 12_345, callsInFlight: 1_024,
                                              bytesReceived: 3 << 20, latencyBoundsSeconds: bounds, methods: [method],
                                              memoryHeldBytes: 2 << 20, callsParked: 3, callsParkedTotal: 4_000),
                                      LocalTime(environment: ["TZ": "UTC"]))
        // Counts are grouped as the bench groups them (audit 27 L13).
        #expect(text.contains("Connections  2 open, 12,345 accepted\n"))
        #expect(text.contains("Calls        1,024 in flight, 1,000,000 finished\n"))
        #expect(text.contains("Bytes        3 MiB received, 0 B sent\n"))
        #expect(text.contains("Held         2 MiB for peers, 3 calls waiting for replies to be read (4,000 since start)\n"))
        let row = try #require(text.split(separator: "\n").first { $0.hasPrefix("/a.B/C") })
        #expect(row.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
                == ["/a.B/C", "1,000,000", "2", "5ms", "≤1ms", "≤100ms", "OK", "999,998;", "NOT_FOUND", "2"])
    }
}
