// swift-tools-version: 6.0
import Foundation
import PackageDescription

// Benchmarks live in their own package so that neither the normal build nor CI compiles them.
// Run: swift run -c release --package-path Benchmarks
// The package identity of a path dependency is its folder's name, which is whatever the clone was
// called: read it from this file's location instead of assuming one.
let toolkit = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

let package = Package(
    name: "EnsemblesBenchmarks",
    dependencies: [.package(path: toolkit.path)],
    targets: [
        .executableTarget(name: "CodecBenchmarks", dependencies: [.product(name: "EnsemblesToolkit", package: toolkit.lastPathComponent)]),
        .executableTarget(name: "ApplyBenchmark", dependencies: [.product(name: "EnsemblesToolkit", package: toolkit.lastPathComponent)]),
    ]
)
