// swift-tools-version: 6.0
import PackageDescription

let settings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    // Each file imports what it uses, and only a `public import` lets a module's types
    // (protobuf-c, sqlite3, libpq, ...) into another module's public API.
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

// No unsafeFlags here: they stop other packages from depending on LarderClient. Release-only
// compiler flags (-enforce-exclusivity=unchecked) come from scripts/build-release.sh.

/// The commit `--version`, `Admin/GetServerInfo` and `larder_build_info` report: the build
/// scripts set `LARDER_COMMIT` (scripts/commit-id.sh); without it the binaries say "unknown".
/// A define of the one C file that returns it, so a new commit recompiles that file alone.
let buildCommit = Context.environment["LARDER_COMMIT"].map { value in
    String(value.filter { $0.isASCII && ($0.isLetter || $0.isNumber || "-._+".contains($0)) }.prefix(64))
}.flatMap { $0.isEmpty ? nil : $0 }
let buildInfoSettings: [CSetting] = buildCommit.map { [.define("LARDER_COMMIT", to: "\"\($0)\"")] } ?? []

let package = Package(
    name: "Larder",
    products: [
        .executable(name: "larder-server", targets: ["larder-server"]),
        .executable(name: "larder", targets: ["larder"]),
        .library(name: "LarderClient", targets: ["LarderClient"]),
    ],
    targets: [
        // C libraries from Debian, and the C code protoc-c generates from proto/.
        .systemLibrary(name: "CProtobufC", pkgConfig: "libprotobuf-c",
                       providers: [.apt(["libprotobuf-c-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CEpoll"),
        .systemLibrary(name: "CNghttp2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CLarderSystem"),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .target(name: "CLarderProto", dependencies: ["CProtobufC"]),
        // The commit the build was made from (see buildInfoSettings).
        .target(name: "CLarderBuildInfo", cSettings: buildInfoSettings),

        // Sockets, addresses (HOST:PORT), the monotonic clock, threads: POSIX plumbing shared by the
        // reactor, the client and the bench. Portable (Linux and Darwin), no epoll, no Foundation.
        .target(name: "LarderSystem", dependencies: ["CLarderSystem"], swiftSettings: settings),

        // Wire format: status codes, protobuf-c wrapper, frames, envelopes. Portable.
        .target(name: "LarderWire", dependencies: ["CLarderProto", "CProtobufC", "CLarderBuildInfo"], swiftSettings: settings),
        // The larder.v1 messages as Swift values, converted to and from protobuf-c.
        .target(name: "LarderAPI", dependencies: ["LarderWire", "CLarderProto", "CProtobufC"],
                swiftSettings: settings),
        // The proto3 JSON mapping for every message, driven by the protobuf-c descriptors.
        .target(name: "LarderJSON", dependencies: ["LarderWire", "CLarderProto", "CProtobufC"],
                swiftSettings: settings),
        // Business rules and the storage interface, independent of any database.
        .target(name: "LarderStore", dependencies: ["LarderAPI", "LarderWire", "LarderSystem"], swiftSettings: settings),
        // The SQLite storage backend.
        .target(name: "LarderSQLite", dependencies: ["LarderStore", "LarderAPI", "LarderWire", "LarderSystem", "CSQLite"],
                swiftSettings: settings),
        // The PostgreSQL storage backend (libpq), for many server replicas on one database.
        .target(name: "LarderPostgres", dependencies: ["LarderStore", "LarderAPI", "LarderWire", "LarderSystem", "CLibPQ"],
                swiftSettings: settings),
        // Event loop: epoll, non-blocking sockets, wake-ups. Linux only.
        .target(name: "LarderReactor", dependencies: ["CEpoll", "LarderSystem"], swiftSettings: settings),
        // gRPC over HTTP/2 on libnghttp2: a socket-free session per connection (bytes in, events and bytes out).
        .target(name: "LarderHTTP2", dependencies: ["CNghttp2", "CZlib", "LarderWire"], swiftSettings: settings),
        // TLS on OpenSSL 3: contexts from PEM files and a socket-free session per connection
        // (ciphertext in, plaintext out; plaintext in, ciphertext out).
        .target(name: "LarderTLS", dependencies: ["COpenSSL", "LarderWire"], swiftSettings: settings),
        // The RPC server: connections, framing, routing, services.
        .target(name: "LarderServer",
                dependencies: ["LarderReactor", "LarderSystem", "LarderWire", "LarderAPI", "LarderStore", "LarderHTTP2",
                               "LarderTLS", "CLarderProto", "CProtobufC"],
                swiftSettings: settings),
        // What `larder-server` runs: its flags, and the choice of SQLite or PostgreSQL behind the store interface.
        .target(name: "LarderServerMain",
                dependencies: ["LarderServer", "LarderStore", "LarderSQLite", "LarderPostgres", "LarderReactor", "LarderWire",
                               "LarderTLS"],
                swiftSettings: settings),
        // The client library: portable POSIX sockets, many calls in flight per connection.
        .target(name: "LarderClient", dependencies: ["LarderWire", "LarderAPI", "LarderSystem", "LarderTLS"],
                swiftSettings: settings),
        // Load generation for `larder bench`: its own event loop, HDR histogram, reports; the lean
        // protocol, or gRPC over HTTP/2 through LarderHTTP2's client session (`--protocol grpc`); either over TLS.
        .target(name: "LarderBench",
                dependencies: ["LarderWire", "LarderAPI", "LarderClient", "LarderJSON", "LarderSystem", "LarderHTTP2", "LarderTLS",
                               "CLarderProto", "CProtobufC",
                               .target(name: "CEpoll", condition: .when(platforms: [.linux]))],
                swiftSettings: settings),
        // The `larder` command line: commands, tables, JSON.
        .target(name: "LarderCLI",
                dependencies: ["LarderClient", "LarderBench", "LarderAPI", "LarderWire", "LarderJSON", "LarderSystem"],
                swiftSettings: settings),
        .executableTarget(name: "larder-server", dependencies: ["LarderServerMain", "LarderSystem"], swiftSettings: settings),
        .executableTarget(name: "larder", dependencies: ["LarderCLI", "LarderSystem"], swiftSettings: settings),

        // Fuzz targets (Fuzz/): scripts/fuzz.sh builds them with libFuzzer; a normal build replays a corpus.
        .target(name: "LarderFuzzTargets", dependencies: ["LarderSystem", "LarderWire", "LarderAPI", "LarderStore", "LarderHTTP2", "LarderMemoryStore"],
                path: "Fuzz/Sources/LarderFuzzTargets", swiftSettings: settings),
        .executableTarget(name: "larder-fuzz-frames", dependencies: ["LarderFuzzTargets"],
                          path: "Fuzz/Sources/larder-fuzz-frames", swiftSettings: settings),
        .executableTarget(name: "larder-fuzz-envelope", dependencies: ["LarderFuzzTargets"],
                          path: "Fuzz/Sources/larder-fuzz-envelope", swiftSettings: settings),
        .executableTarget(name: "larder-fuzz-payload", dependencies: ["LarderFuzzTargets"],
                          path: "Fuzz/Sources/larder-fuzz-payload", swiftSettings: settings),
        .executableTarget(name: "larder-fuzz-http2", dependencies: ["LarderFuzzTargets"],
                          path: "Fuzz/Sources/larder-fuzz-http2", swiftSettings: settings),

        // An in-memory StoreWriter, for the payload fuzz target and the in-process server tests:
        // a target of its own so the fuzz build links neither Foundation nor libpq for it.
        .target(name: "LarderMemoryStore", dependencies: ["LarderStore", "LarderAPI", "LarderWire"],
                path: "Tests/LarderMemoryStore", swiftSettings: settings),
        // Shared by the test targets: a PostgreSQL database of one test's own, the in-memory
        // Store, ports, temporary directories, clients, status expectations, blocking work off the pool.
        .target(name: "LarderTestSupport",
                dependencies: ["LarderPostgres", "LarderMemoryStore", "LarderStore", "LarderClient", "LarderAPI",
                               "LarderWire", "LarderHTTP2", "LarderSystem", "CLarderSystem"],
                path: "Tests/LarderTestSupport", swiftSettings: settings),
        .testTarget(name: "LarderSystemTests", dependencies: ["LarderSystem", "CLarderSystem"], swiftSettings: settings),
        .testTarget(name: "LarderWireTests", dependencies: ["LarderWire", "LarderAPI", "LarderTestSupport"],
                    swiftSettings: settings),
        .testTarget(name: "LarderHTTP2Tests", dependencies: ["LarderHTTP2", "LarderWire", "LarderSystem"], swiftSettings: settings),
        .testTarget(name: "LarderTLSTests", dependencies: ["LarderTLS", "LarderWire", "LarderTestSupport"],
                    swiftSettings: settings),
        .testTarget(name: "LarderJSONTests", dependencies: ["LarderJSON", "LarderWire", "LarderAPI"],
                    swiftSettings: settings),
        .testTarget(name: "LarderStoreTests",
                    dependencies: ["LarderStore", "LarderSQLite", "CSQLite", "LarderPostgres", "LarderAPI", "LarderTestSupport"],
                    swiftSettings: settings),
        .testTarget(name: "LarderBenchTests", dependencies: ["LarderBench", "LarderClient", "LarderSystem", "LarderTestSupport"], swiftSettings: settings),
        .testTarget(name: "LarderCLITests", dependencies: ["LarderCLI", "LarderClient", "LarderAPI", "LarderSystem", "LarderTestSupport"],
                    swiftSettings: settings),
        // The server in the test process, over the in-memory store: routing, admission, limits, drain.
        .testTarget(name: "LarderServerTests",
                    dependencies: ["LarderServer", "LarderReactor", "LarderClient", "LarderAPI", "LarderWire",
                                   "LarderStore", "LarderMemoryStore", "LarderTestSupport", "LarderHTTP2", "LarderTLS"],
                    swiftSettings: settings),
        .testTarget(name: "LarderFuzzTargetsTests", dependencies: ["LarderFuzzTargets", "LarderAPI", "LarderWire"],
                    swiftSettings: settings),
        // The call core driven by an in-process test transport: streaming calls, INTERNAL references.
        .testTarget(name: "LarderCallCoreTests",
                    dependencies: ["LarderServer", "LarderReactor", "LarderStore", "LarderSystem", "LarderAPI", "LarderWire",
                                   "LarderTestSupport"],
                    swiftSettings: settings),
        .testTarget(name: "LarderEndToEndTests",
                    dependencies: ["LarderClient", "LarderAPI", "LarderWire", "LarderCLI", "LarderJSON",
                                   "LarderPostgres", "LarderSQLite", "LarderSystem", "LarderTestSupport", "LarderHTTP2",
                                   "LarderTLS", "larder-server", "larder"],
                    swiftSettings: settings),
    ]
)
