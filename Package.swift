// swift-tools-version: 6.0
// Sluice: bulk import into an object graph with Core Data's semantics, for Linux.
// Module graph (one-way, see docs/DESIGN in the shared docs):
//   C modules -> Drivers -> {Readers, Stores};  ObjectGraph -> {Stores, Pipeline};
//   {Readers, Stores} -> Pipeline -> SluiceCLI
import PackageDescription

let package = Package(
    name: "Sluice",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "ObjectGraph", targets: ["ObjectGraph"]),
        .library(name: "Readers", targets: ["Readers"]),
        .library(name: "Pipeline", targets: ["Pipeline"]),
        .executable(name: "sluice", targets: ["SluiceCLI"]),
        .executable(name: "sluice-bench", targets: ["SluiceBench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
    ],
    targets: [
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .target(name: "Drivers", dependencies: ["CSQLite", "CLibXML2", "CZlib"]),
        .target(
            name: "ObjectGraph", dependencies: [.product(name: "OrderedCollections", package: "swift-collections")]),
        .target(name: "Stores", dependencies: ["ObjectGraph", "Drivers"]),
        .target(name: "Readers", dependencies: ["Drivers"]),
        .target(name: "Pipeline", dependencies: ["ObjectGraph", "Stores", "Readers", "Yams"]),
        .executableTarget(
            name: "SluiceCLI",
            dependencies: [
                "Pipeline", "Readers", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .executableTarget(name: "SluiceBench", dependencies: ["ObjectGraph", "Stores", "Readers", "Drivers"]),
        .target(name: "TestSupport", dependencies: ["ObjectGraph"], path: "Tests/TestSupport"),
        .testTarget(name: "ObjectGraphTests", dependencies: ["ObjectGraph", "TestSupport"]),
        .testTarget(name: "DriversTests", dependencies: ["Drivers"]),
        .testTarget(name: "ReadersTests", dependencies: ["Readers", "Drivers", "TestSupport"]),
        .testTarget(name: "StoresTests", dependencies: ["Stores", "Drivers", "TestSupport"]),
        .testTarget(name: "PipelineTests", dependencies: ["Pipeline", "Stores", "Readers", "TestSupport"]),
        .testTarget(name: "SluiceCLITests", dependencies: ["TestSupport", "Drivers"]),
    ]
)
