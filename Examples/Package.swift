// swift-tools-version: 6.0
import Foundation
import PackageDescription

// Users of the toolkit, outside it: one short program per use, each depending on it by path the
// way an app would by URL. The package identity of a path dependency is its folder's name, which
// is whatever the clone was called; read it from this file's location instead of assuming one.
let toolkit = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

// Member import visibility (the direction of the language): `import EnsemblesToolkit` alone must
// make every member of what the library hands back usable.
func example(_ name: String) -> Target {
    .executableTarget(
        name: name, dependencies: [.product(name: "EnsemblesToolkit", package: toolkit.lastPathComponent)],
        swiftSettings: [.enableUpcomingFeature("MemberImportVisibility")])
}

let package = Package(
    name: "Examples",
    platforms: [.macOS(.v13)],
    dependencies: [.package(path: toolkit.path)],
    targets: ["MergeAFolder", "VerifyAFolder", "DeviceView", "RepairPlan"].map(example)
)
