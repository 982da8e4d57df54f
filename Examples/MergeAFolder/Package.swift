// swift-tools-version: 6.0
import Foundation
import PackageDescription

// A user of the toolkit, outside it: depends on it by path, the way an app would by URL.
// The package identity of a path dependency is its folder's name, which is whatever the
// clone was called; read it from this file's location instead of assuming one.
let toolkit = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

let package = Package(
    name: "MergeAFolder",
    platforms: [.macOS(.v13)],
    dependencies: [.package(path: toolkit.path)],
    targets: [
        // Member import visibility (the direction of the language): `import EnsemblesToolkit`
        // alone must make every member of what the library hands back usable.
        .executableTarget(
            name: "MergeAFolder", dependencies: [.product(name: "EnsemblesToolkit", package: toolkit.lastPathComponent)],
            swiftSettings: [.enableUpcomingFeature("MemberImportVisibility")])
    ]
)
