// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Courier",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11)],
    products: [
        .library(name: "Courier", targets: ["Courier"]),
    ],
    dependencies: [],
    targets: [
        .target(name: "Courier", dependencies: ["CourierCurl", "CourierSQLite"]),
        // libcurl loaded at run time with declarations of Courier's own: no curl headers needed to build.
        .target(name: "CourierCurl", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        // SQLite (the durable journal) loaded at run time the same way: no sqlite3.h needed to build.
        .target(name: "CourierSQLite", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        .executableTarget(
            name: "CourierExample",
            dependencies: ["Courier"],
            path: "Examples/CourierExample",
            exclude: ["Fixtures"]  // read at run time from the source folder, like a user's own fixtures
        ),
        .testTarget(name: "CourierTests", dependencies: ["Courier"]),
        // The app that DurableCrashTests kills with SIGKILL and starts again (issue #22's crash test).
        .executableTarget(name: "CourierCrashChild", dependencies: ["Courier"], path: "Tests/CourierCrashChild"),
        // The heap in use (glibc's mallinfo2), which the benchmark's memory figures report beside RSS.
        .target(name: "CourierBenchHeap", path: "Benchmarks/CourierBenchHeap"),
        .executableTarget(name: "CourierBench", dependencies: ["Courier", "CourierBenchHeap"], path: "Benchmarks/CourierBench"),
    ],
    swiftLanguageModes: [.v6]
)
