import Foundation
import JSONDocument
import KeyedArchive
import Testing

/// The real-world check (Spec/device-state.md 3.8): three `elements` files of Xcode's old model
/// format, written by Apple's archiver, copied from TICoreDataSync with its licence
/// (Fixtures/external/README.md). The expected names were read by hand from TICoreDataSync's
/// headers (`TICDSSyncChange.h`, `TICDSSyncChangeSet.m`, the Notebook example's `TINBNote.h`) and
/// its rule that every synchronized entity has the string attribute `ticdsSyncID`; none were
/// taken from this reader's output.
@Suite("Real keyed archives (Xcode's old model format)")
struct RealArchiveTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/external/ticoredatasync")

    static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: root.appendingPathComponent(path))) }

    struct Case: Sendable, CustomStringConvertible {
        var path: String
        /// Entity name -> (attribute names, relationship names).
        var entities: [String: (attributes: Set<String>, relationships: Set<String>)]
        var description: String { path }
    }

    static let cases = [
        Case(
            path: "03 Internal Data Model/TICDSSyncChange.xcdatamodel/elements",
            entities: [
                "TICDSSyncChange": (
                    [
                        "changeType", "objectEntityName", "objectSyncID", "relevantKey", "changedAttributes", "changedRelationships",
                        "relatedObjectEntityName", "localTimeStamp",
                    ], []
                )
            ]),
        Case(
            path: "03 Internal Data Model/TICDSSyncChangeSet.xcdatamodeld/TICDSSyncChangeSet.xcdatamodel/elements",
            entities: ["TICDSSyncChangeSet": (["syncChangeSetIdentifier", "fileName", "creationDate", "localDateOfApplication", "clientIdentifier"], [])]),
        Case(
            path: "Examples/Notebook/Notebook/Notebook.xcdatamodeld/Notebook.xcdatamodel/elements",
            entities: ["Note": (["title", "content", "ticdsSyncID"], ["tags"]), "Tag": (["name", "ticdsSyncID"], ["notes"])]),
    ]

    /// Entity name -> (attribute names, relationship names), as the model package lists them:
    /// the root model's `_xd_rootPackage`, its `XDBucketForClassesstorage` (name -> entity) and each
    /// entity's `XDBucketForOwnedAttributesstorage` (name -> attribute or relationship).
    static func entities(_ archive: KeyedArchive) throws -> [String: (attributes: Set<String>, relationships: Set<String>)] {
        let model = try #require(archive.root)
        let package = try #require(model[member: "_xd_rootPackage"])
        let classes = try #require(package[member: "XDBucketForClassesstorage"]?.pairs)
        var result: [String: (attributes: Set<String>, relationships: Set<String>)] = [:]
        for pair in classes {
            let name = try #require(pair.key.string)
            guard case .object(let entity) = pair.value, entity.className == "XDPMEntity" else { continue }
            #expect(entity.members["_name"] == .string(name), "the entity's own name equals its key")
            // An entity's owner is the package: a link, not followed.
            #expect(archive.resolve(try #require(entity.members["_owner"]))[member: "_name"] != nil)
            var attributes: Set<String> = [], relationships: Set<String> = []
            for property in try #require(entity.members["XDBucketForOwnedAttributesstorage"]?.pairs) {
                let propertyName = try #require(property.key.string)
                guard case .object(let object) = property.value else { continue }
                #expect(object.members["_name"] == .string(propertyName))
                switch object.className {
                case "XDPMAttribute": attributes.insert(propertyName)
                case "XDPMRelationship": relationships.insert(propertyName)
                default: Issue.record("\(name).\(propertyName) is a \(object.className)")
                }
            }
            result[name] = (attributes, relationships)
        }
        return result
    }

    @Test("each elements file decodes with the Xcode model classes, to the entities and properties its model defines", arguments: cases)
    func decodes(_ testCase: Case) throws {
        let archive = try KeyedArchiveReader(classes: .xcodeModel).read(try Self.bytes(testCase.path))
        guard case .object(let model) = archive.root else {
            Issue.record("the root is not an object")
            return
        }
        #expect(model.className == "XDPMModel")
        let entities = try Self.entities(archive)
        #expect(entities.keys.sorted() == testCase.entities.keys.sorted())
        for (name, expected) in testCase.entities {
            #expect(entities[name]?.attributes == expected.attributes, "\(name)")
            #expect(entities[name]?.relationships == expected.relationships, "\(name)")
        }
    }

    @Test("with only the Ensembles classes allowed, the model classes are refused at the root's $class", arguments: cases)
    func refusedWithoutTheModelClasses(_ testCase: Case) throws {
        let bytes = try Self.bytes(testCase.path)
        do throws(FormatError) {
            _ = try KeyedArchiveReader().read(bytes)
            Issue.record("read without the Xcode model classes")
        } catch {
            #expect(error.code == .archiveClassNotAllowed)
            #expect(error.location.pointer == JSONPointer(["$objects", "1", "$class"]))
        }
    }

    @Test("without the owner links, the owner pointers of the real files are cycles")
    func ownersAreCycles() throws {
        var classes = ArchiveClasses.xcodeModel
        for name in classes.keyedClasses.keys { classes.keyedClasses[name] = [] }
        let bytes = try Self.bytes(Self.cases[0].path)
        do throws(FormatError) {
            _ = try KeyedArchiveReader(classes: classes).read(bytes)
            Issue.record("read without links")
        } catch {
            #expect(error.code == .archiveCycle)
        }
    }
}
