import Foundation
import Testing
import JSONDocument
import EnsembleModel
import DataModel
import MergeEngine

/// Inverse maintenance with the original framework's test model, whose Parent and Child hold
/// every pairing: to-one <-> to-one (child/parent), to-many <-> to-one (children/parentWithSiblings)
/// and to-many <-> to-many (friends/testFriends).
@Suite("Merge with a model: inverse relationships")
struct InverseTests {
    static func model() throws -> DataModel {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/external/ensembles-1x/models/CDEStoreModificationEventTestsModel.xcdatamodeld")
        return try ModelBundle(path: path.path).load()
    }

    /// The merged document of one event per list of changes, with `model` (the framework's
    /// test model when nil).
    static func merge(_ changes: [[ObjectChange]], model: DataModel? = nil) throws -> String {
        var input = MergeInput()
        input.model = try model ?? Self.model()
        input.events = changes.enumerated().map { index, list in
            SourcedEvent(
                event: Event(
                    uniqueIdentifier: "e\(index)", type: .save, storeIdentifier: "S", revision: Int64(index),
                    globalCount: Int64(index), timestamp: 0, objectChanges: list), file: "e\(index)")
        }
        return JSONWriter().string(try MergeEngine.merge(input).document())
    }

    static func change(_ type: ChangeType, _ entity: String, _ id: String, _ properties: [PropertyChange] = []) -> ObjectChange {
        ObjectChange(entity: entity, globalIdentifier: id, type: type, propertyChanges: properties)
    }

    @Test("setting a to-one adds the object to the inverse to-many")
    func toOneToMany() throws {
        let result = try Self.merge([
            [
                Self.change(.insert, "Parent", "p"),
                Self.change(.insert, "Child", "c", [PropertyChange(name: "parentWithSiblings", value: .toOne(relatedIdentifier: "p"))]),
            ]
        ])
        #expect(result == #"{"entities":{"Child":{"c":{"parentWithSiblings":"p"}},"Parent":{"p":{"children":["c"]}}}}"#)
    }

    @Test("a one-to-one moved to another object leaves the previous partner with null")
    func oneToOneSteal() throws {
        let result = try Self.merge([
            [
                Self.change(.insert, "Child", "c"),
                Self.change(.insert, "Parent", "p1", [PropertyChange(name: "child", value: .toOne(relatedIdentifier: "c"))]),
            ],
            [Self.change(.insert, "Parent", "p2", [PropertyChange(name: "child", value: .toOne(relatedIdentifier: "c"))])],
        ])
        #expect(result == #"{"entities":{"Child":{"c":{"parent":"p2"}},"Parent":{"p1":{"child":null},"p2":{"child":"c"}}}}"#)
    }

    @Test("many-to-many adds and removes reach the other side")
    func manyToMany() throws {
        let result = try Self.merge([
            [
                Self.change(.insert, "Child", "c1"), Self.change(.insert, "Child", "c2"),
                Self.change(.insert, "Parent", "p", [PropertyChange(name: "friends", value: .toMany(added: ["c1", "c2"], removed: []))]),
            ],
            [Self.change(.update, "Parent", "p", [PropertyChange(name: "friends", value: .toMany(added: [], removed: ["c1"]))])],
        ])
        #expect(result == #"{"entities":{"Child":{"c1":{"testFriends":[]},"c2":{"testFriends":["p"]}},"Parent":{"p":{"friends":["c2"]}}}}"#)
    }

    @Test("a member removed and added back in one change leaves the inverse as it was (only what the change lost or gained reaches it)")
    func removedAndAddedBack() throws {
        // An ordered inverse shows it: a member detached, then attached, would move to the end.
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Item" representedClassName="Item" syncable="YES">
                    <relationship name="tags" optional="YES" toMany="YES" destinationEntity="Tag" inverseName="items" inverseEntity="Tag"/>
                </entity>
                <entity name="Tag" representedClassName="Tag" syncable="YES">
                    <relationship name="items" optional="YES" toMany="YES" ordered="YES" destinationEntity="Item" inverseName="tags" inverseEntity="Item"/>
                </entity>
            </model>
            """
        let model = try ModelXMLReader.parse(Data(xml.utf8), displayPath: "contents", versionName: nil)
        let tagged = PropertyChange(name: "tags", value: .toMany(added: ["t"], removed: []))
        let result = try Self.merge(
            [
                [Self.change(.insert, "Tag", "t"), Self.change(.insert, "Item", "a", [tagged]), Self.change(.insert, "Item", "b", [tagged])],
                [Self.change(.update, "Item", "a", [PropertyChange(name: "tags", value: .toMany(added: ["t"], removed: ["t"]))])],
            ], model: model)
        #expect(result == #"{"entities":{"Item":{"a":{"tags":["t"]},"b":{"tags":["t"]}},"Tag":{"t":{"items":["a","b"]}}}}"#)
    }
}
