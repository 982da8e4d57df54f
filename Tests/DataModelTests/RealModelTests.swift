import Foundation
import Testing
import JSONDocument
import DataModel

/// The real models of the original framework and its examples (Fixtures/external, copied with their licence).
enum RealModels {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/external/ensembles-1x/models")

    static let bundles = [
        "CDEStoreModificationEventTestsModel.xcdatamodeld", "CDEEventStoreModel.xcdatamodeld",
        "Idiomatic/Model.xcdatamodeld", "Simple Sync/Model.xcdatamodeld",
        "Simple Sync in Swift/Model.xcdatamodeld", "Magical Record/Model.xcdatamodeld",
    ]

    static func path(_ bundle: String) -> String { root.appendingPathComponent(bundle).path }
}

@Suite("Real Core Data models")
struct RealModelTests {
    @Test("every version of every real model loads, 9 in all")
    func allVersionsLoad() throws {
        var loaded = 0
        for bundle in RealModels.bundles {
            let model = try ModelBundle(path: RealModels.path(bundle))
            for version in model.versions {
                let dataModel = try model.load(version: version)
                #expect(!dataModel.entities.isEmpty, "\(bundle) \(version)")
                loaded += 1
            }
        }
        #expect(loaded == 9)
    }

    @Test("the current version comes from .xccurrentversion, or is the only version")
    func currentVersion() throws {
        #expect(try ModelBundle(path: RealModels.path("CDEEventStoreModel.xcdatamodeld")).currentVersion == "CDEEventStoreModel_2")
        #expect(try ModelBundle(path: RealModels.path("Idiomatic/Model.xcdatamodeld")).currentVersion == "Model_1")
        #expect(
            try ModelBundle(path: RealModels.path("CDEStoreModificationEventTestsModel.xcdatamodeld")).currentVersion
                == "CDEStoreModificationEventTestsModel")
    }

    @Test("the test model's relationships and attributes read as the XML says")
    func testModelContent() throws {
        let model = try ModelBundle(path: RealModels.path("CDEStoreModificationEventTestsModel.xcdatamodeld")).load()
        #expect(model.entityNames == ["Child", "Parent"])
        guard case .relationship(let ordered)? = model.property("orderedChildren", of: "Parent") else {
            Issue.record("orderedChildren is not a relationship")
            return
        }
        #expect(ordered.isToMany && ordered.isOrdered && ordered.inverseName == "orderedParent" && ordered.deletionRule == "Cascade")
        guard case .attribute(let counter)? = model.property("invalidatingAttribute", of: "Parent") else {
            Issue.record("invalidatingAttribute is not an attribute")
            return
        }
        #expect(counter.type == .integer16 && !counter.isOptional && counter.minimumValue == "0" && counter.defaultValue == "0")
        guard case .relationship(let parent)? = model.property("parent", of: "Child") else {
            Issue.record("parent is not a relationship")
            return
        }
        #expect(!parent.isToMany && parent.maximumCount == 1)
        #expect(model.modelHash.hasPrefix("sha256:") && model.modelHash.count == 7 + 64)
    }
}
