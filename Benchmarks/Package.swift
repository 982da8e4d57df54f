// swift-tools-version: 6.0
import PackageDescription

// Benchmarks live in their own package so that neither the normal build nor CI compiles them.
// Run: swift run -c release --package-path Benchmarks
let package = Package(
    name: "EnsemblesBenchmarks",
    dependencies: [.package(path: "..")],
    targets: [
        .executableTarget(name: "CodecBenchmarks", dependencies: [.product(name: "EnsemblesToolkit", package: "main")]),
    ]
)
