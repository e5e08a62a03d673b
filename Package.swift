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
        .target(name: "Courier"),
        .executableTarget(
            name: "CourierExample",
            dependencies: ["Courier"],
            path: "Examples/CourierExample"
        ),
        .testTarget(name: "CourierTests", dependencies: ["Courier"]),
    ],
    swiftLanguageModes: [.v6]
)
