// swift-tools-version: 6.0
// Sluice: bulk import into an object graph with Core Data's semantics, for Linux.
// Module graph (one-way; docs/ARCHITECTURE.md draws it):
//   C modules -> Drivers -> {Readers, Stores};  ObjectGraph -> {Stores, ModelFiles};  Readers -> ModelFiles;
//   {Readers, Stores, ModelFiles} -> Pipeline -> SluiceCLI
import PackageDescription

/// Every target: undeclared imports fail the build (a module uses only what it imports).
let settings: [SwiftSetting] = [.enableUpcomingFeature("MemberImportVisibility")]

let package = Package(
    name: "Sluice",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "ObjectGraph", targets: ["ObjectGraph"]),
        .library(name: "Stores", targets: ["Stores"]),
        .library(name: "Readers", targets: ["Readers"]),
        .library(name: "ModelFiles", targets: ["ModelFiles"]),
        .library(name: "Pipeline", targets: ["Pipeline"]),
        .executable(name: "sluice", targets: ["SluiceCLI"]),
        .executable(name: "sluice-bench", targets: ["SluiceBench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CMalloc"),
        .target(
            name: "Drivers", dependencies: ["CSQLite", "CLibXML2", "CZlib", "CMalloc", "CLibPQ"],
            swiftSettings: settings),
        .target(
            name: "ObjectGraph",
            dependencies: [.product(name: "OrderedCollections", package: "swift-collections")],
            swiftSettings: settings),
        .target(name: "Stores", dependencies: ["ObjectGraph", "Drivers"], swiftSettings: settings),
        .target(name: "Readers", dependencies: ["Drivers"], swiftSettings: settings),
        .target(name: "ModelFiles", dependencies: ["ObjectGraph", "Readers", "Yams"], swiftSettings: settings),
        .target(
            name: "Pipeline", dependencies: ["ObjectGraph", "Stores", "Readers", "ModelFiles", "Yams"],
            swiftSettings: settings),
        .executableTarget(
            name: "SluiceCLI",
            dependencies: [
                "Pipeline", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: settings),
        .executableTarget(
            name: "SluiceBench", dependencies: ["ObjectGraph", "Stores", "Readers", "Drivers"],
            swiftSettings: settings),
        .target(
            name: "TestSupport", dependencies: ["ObjectGraph", "Drivers"], path: "Tests/TestSupport",
            swiftSettings: settings),
        .testTarget(name: "ObjectGraphTests", dependencies: ["ObjectGraph", "TestSupport"], swiftSettings: settings),
        .testTarget(name: "DriversTests", dependencies: ["Drivers", "TestSupport"], swiftSettings: settings),
        .testTarget(
            name: "ReadersTests", dependencies: ["Readers", "Drivers", "TestSupport"], swiftSettings: settings),
        .testTarget(name: "StoresTests", dependencies: ["Stores", "Drivers", "TestSupport"], swiftSettings: settings),
        .testTarget(
            name: "StoreConformanceTests", dependencies: ["ObjectGraph", "Stores", "TestSupport"],
            swiftSettings: settings),
        .testTarget(
            name: "ModelFilesTests", dependencies: ["ModelFiles", "ObjectGraph", "Readers", "TestSupport"],
            swiftSettings: settings),
        .testTarget(
            name: "PipelineTests",
            dependencies: ["Pipeline", "ModelFiles", "ObjectGraph", "Stores", "Readers", "Drivers", "TestSupport"],
            swiftSettings: settings),
        .testTarget(name: "SluiceCLITests", dependencies: ["TestSupport", "Drivers"], swiftSettings: settings),
    ]
)
