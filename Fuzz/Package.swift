// swift-tools-version: 6.0
import PackageDescription

// libFuzzer entry point for every reader of untrusted bytes. A separate package so the normal
// build never compiles it: run ./run.sh (it builds with -sanitize=fuzzer,address).
let package = Package(
    name: "EnsemblesFuzz",
    dependencies: [.package(path: "..")],
    targets: [
        .executableTarget(
            name: "FuzzDecoders",
            dependencies: [.product(name: "EnsemblesToolkit", package: "main")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
    ]
)
