// swift-tools-version: 6.0
import Foundation
import PackageDescription

// libFuzzer entry point for every reader of untrusted bytes. A separate package so the normal
// build never compiles it: run ./run.sh (it builds with -sanitize=fuzzer,address).
// The package identity of a path dependency is its folder's name, which is whatever the clone was
// called: read it from this file's location instead of assuming one.
let toolkit = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

let package = Package(
    name: "EnsemblesFuzz",
    dependencies: [.package(path: toolkit.path)],
    targets: [
        .executableTarget(
            name: "FuzzDecoders",
            dependencies: [.product(name: "EnsemblesToolkit", package: toolkit.lastPathComponent)],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
    ]
)
