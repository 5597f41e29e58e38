// swift-tools-version: 6.0
// libFuzzer targets for the readers, model files and pipeline files, kept out of the main package: they only link with
// `-sanitize=fuzzer` (see `make fuzz` and ../shared/docs/TOOLCHAIN.md).
import PackageDescription

let package = Package(
    name: "SluiceFuzz",
    dependencies: [.package(name: "Sluice", path: "..")],
    targets: [
        .target(name: "FuzzSupport", dependencies: [.product(name: "Readers", package: "Sluice")]),
        .executableTarget(
            name: "FuzzCSV", dependencies: ["FuzzSupport", .product(name: "Readers", package: "Sluice")]),
        .executableTarget(
            name: "FuzzXML", dependencies: ["FuzzSupport", .product(name: "Readers", package: "Sluice")]),
        .executableTarget(
            name: "FuzzJSON", dependencies: ["FuzzSupport", .product(name: "Readers", package: "Sluice")]),
        .executableTarget(
            name: "FuzzSQLDump", dependencies: ["FuzzSupport", .product(name: "Readers", package: "Sluice")]),
        .executableTarget(
            name: "FuzzSQLiteFile", dependencies: ["FuzzSupport", .product(name: "Readers", package: "Sluice")]),
        .executableTarget(
            name: "FuzzModelFile", dependencies: ["FuzzSupport", .product(name: "ModelFiles", package: "Sluice")]),
        .executableTarget(
            name: "FuzzPipelineFile",
            dependencies: [
                "FuzzSupport", .product(name: "Pipeline", package: "Sluice"),
                .product(name: "ModelFiles", package: "Sluice"),
            ]),
    ]
)
