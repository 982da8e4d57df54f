// swift-tools-version: 6.2
import PackageDescription

// Layers, bottom to top; a target depends only on targets in lower layers:
//   Infrastructure  CZlib -> Deflate; CFileSystem -> TemporaryFiles; CSQLite, TemporaryFiles ->
//                   SQLiteConnection (a new database file is published like every other);
//                   ParallelWork; ProgressReporting; CPrefetch; XMLInput (SQLiteConnection reports errors as
//                   JSONDocument's FormatError, the one error type of every layer)
//   Format          JSONDocument -> EnsembleModel, DataModel -> EventCodecs; FileWrappers;
//                   KeyedArchive
//   Validation      SchemaValidation, ModelValidation
//   Merge | Folder  MergeEngine | CloudFolder -> SyntheticHistory, CoreDataStore -> DeviceState,
//                   CloudFolder + CoreDataStore + KeyedArchive -> TICDS; RemoteFolder (siblings:
//                   neither side imports the other)
//   Operations      EnsemblesToolkit: what a library user calls (merge, verify, ...)
//   Tool            SQLiteExport, LogToolCore -> logtool (+ LogToolAllocator, with the Jemalloc
//                   trait; FuzzDecoders, with the Fuzzing trait)
let package = Package(
    name: "EnsemblesToolkit",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "EnsemblesToolkit", targets: [
            "JSONDocument", "EnsembleModel", "DataModel", "EventCodecs", "FileWrappers", "SchemaValidation", "ModelValidation", "MergeEngine",
            "CloudFolder", "CoreDataStore", "EnsemblesToolkit",
        ]),
        .executable(name: "logtool", targets: ["logtool"]),
    ],
    traits: [
        // Off by default, so that a plain `swift build` needs nothing beyond Swift; the release
        // build the README recommends, and scripts/test, turn it on. (Tools 6.2: SwiftPM 6.1
        // linked a dependency guarded by a trait even with the trait off.)
        .trait(name: "Jemalloc", description: "The logtool executable allocates with jemalloc (Debian: libjemalloc-dev) instead of the C library's malloc."),
        // Fuzz/run.sh turns it on, with libFuzzer and AddressSanitizer, for the FuzzDecoders target.
        .trait(name: "Fuzzing", description: "FuzzDecoders is libFuzzer's entry point over every decoder of untrusted bytes (build it with -sanitize=fuzzer)."),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        // `swift package generate-documentation --target EnsemblesToolkit`: the library's API
        // documentation (a plugin; nothing of it is built by `swift build`).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .target(name: "JSONDocument", path: "Sources/Format/JSONDocument"),
        // Temporary paths to remove when a signal stops a command (no dependencies).
        .target(name: "TemporaryFiles", dependencies: ["CFileSystem"], path: "Sources/Infrastructure/TemporaryFiles"),
        // How far a long operation is, for a progress line on a terminal (no dependencies).
        .target(name: "ProgressReporting", path: "Sources/Infrastructure/ProgressReporting"),
        .target(name: "EnsembleModel", dependencies: ["JSONDocument"], path: "Sources/Format/EnsembleModel"),
        // Core Data models: XML through Foundation's XMLParser (libxml2), SHA-256 for the model hash.
        .target(
            name: "DataModel",
            dependencies: ["JSONDocument", "XMLInput", "FileInput", .product(name: "Crypto", package: "swift-crypto")],
            path: "Sources/Format/DataModel"
        ),
        // NSKeyedArchiver archives from untrusted bytes, bounded, with an allow-list of classes;
        // binary and XML property lists read by hand (Spec/device-state.md 3).
        .target(name: "KeyedArchive", dependencies: ["JSONDocument"], path: "Sources/Format/KeyedArchive"),
        // The system zlib (zlib1g-dev): CRC-32 and raw DEFLATE for the binary encoding and blobs.
        .systemLibrary(name: "CZlib", path: "Sources/Infrastructure/CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // CRC-32 and raw DEFLATE over CZlib, for the binary encoding, blobs and zip archives.
        .target(name: "Deflate", dependencies: ["CZlib"], path: "Sources/Infrastructure/Deflate"),
        // Slots and a counter that concurrent workers share (no dependencies).
        .target(name: "ParallelWork", path: "Sources/Infrastructure/ParallelWork"),
        // The check every XML document passes before Foundation's XMLParser reads it (the parser
        // stops the process on some documents that are not UTF-8).
        .target(name: "XMLInput", path: "Sources/Infrastructure/XMLInput"),
        // Files of folders the toolkit does not control, opened without blocking or following a
        // link, checked to be regular and read bounded (event, data, model and device files).
        .target(name: "FileInput", path: "Sources/Infrastructure/FileInput"),
        .target(
            name: "EventCodecs",
            dependencies: [
                "JSONDocument", "EnsembleModel", "DataModel", "Deflate", "ParallelWork", .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Sources/Format/EventCodecs"
        ),
        // Ensembles 2's wrappers (RNCryptor v3 encryption, one-entry zip archives) and what a
        // file's first bytes say it is (Spec/wrappers.md). CryptoExtras gives AES-CBC and PBKDF2.
        .target(
            name: "FileWrappers",
            dependencies: [
                "JSONDocument", "Deflate", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            path: "Sources/Format/FileWrappers"
        ),
        .target(
            name: "SchemaValidation",
            dependencies: ["JSONDocument"],
            path: "Sources/Validation/SchemaValidation",
            // `Schemas` is a link to Spec/schemas: the Spec's files are the single source of truth,
            // compiled into the library so that no installed binary depends on a resource folder.
            resources: [
                .embedInCode("Schemas/v2-event.schema.json"),
                .embedInCode("Schemas/v1-event.schema.json"),
                .embedInCode("Schemas/inspect.schema.json"),
                .embedInCode("Schemas/state.schema.json"),
                .embedInCode("Schemas/verify.schema.json"),
                .embedInCode("Schemas/history.schema.json"),
                .embedInCode("Schemas/device.schema.json"),
                .embedInCode("Schemas/repair.schema.json"),
                .embedInCode("Schemas/device-state.schema.json"),
                .embedInCode("Schemas/diff.schema.json"),
            ]
        ),
        .target(
            name: "ModelValidation",
            dependencies: ["JSONDocument", "EnsembleModel", "DataModel", "EventCodecs"],
            path: "Sources/Validation/ModelValidation"
        ),
        // The system's libsqlite3 (libsqlite3-dev), with a shim for SQLITE_TRANSIENT.
        .systemLibrary(name: "CSQLite", path: "Sources/Infrastructure/CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "SQLiteConnection", dependencies: ["CSQLite", "JSONDocument", "TemporaryFiles"], path: "Sources/Infrastructure/SQLiteConnection"),
        // An app's Core Data SQLite store, read-only: metadata, entity hashes, entity tables, and its
        // rows read with a model from a private copy (Spec/device-state.md 2).
        .target(name: "CoreDataStore", dependencies: ["JSONDocument", "DataModel", "SQLiteConnection", "TemporaryFiles"], path: "Sources/Folder/CoreDataStore"),
        // One device's own state for an ensemble (Ensembles 1.x's event-data folder): store.plist, the
        // event store read with CDEEventStoreModel, data files, transit cache (Spec/device-state.md 5, 6).
        .target(
            name: "DeviceState",
            dependencies: ["JSONDocument", "DataModel", "EnsembleModel", "EventCodecs", "KeyedArchive", "SQLiteConnection", "CoreDataStore", "FileInput"],
            path: "Sources/Folder/DeviceState"
        ),
        .target(
            name: "MergeEngine",
            dependencies: [
                "JSONDocument", "EnsembleModel", "DataModel", "EventCodecs", "SQLiteConnection", "ProgressReporting", "CPrefetch", "ParallelWork",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Sources/Merge/MergeEngine"
        ),
        // The processor's prefetch hint, which Swift cannot issue (see StoreState.apply).
        .target(name: "CPrefetch", path: "Sources/Infrastructure/CPrefetch"),
        // renameat2(RENAME_NOREPLACE) for publishing converted folders without replacing anything.
        .target(name: "CFileSystem", path: "Sources/Infrastructure/CFileSystem"),
        .target(
            name: "CloudFolder",
            dependencies: [
                "JSONDocument", "EnsembleModel", "DataModel", "EventCodecs", "SchemaValidation", "ModelValidation",
                "SQLiteConnection", "CFileSystem", "FileInput", "TemporaryFiles", "ProgressReporting", "FileWrappers", "ParallelWork",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Sources/Folder/CloudFolder"
        ),
        // TICoreDataSync's remote folder, read-only: FZACryptor, property lists, change sets and
        // AppliedSyncChangeSets in SQLite form, WholeStores (Spec/ticds.md).
        .target(
            name: "TICDS",
            dependencies: [
                "JSONDocument", "KeyedArchive", "FileWrappers", "CloudFolder", "CoreDataStore", "DataModel", "SQLiteConnection", "TemporaryFiles",
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            path: "Sources/Folder/TICDS"
        ),
        // A remote folder (WebDAV, S3) copied into a local snapshot, read-only, over Foundation's
        // URLSession (Spec/remote.md; why URLSession: HTTPTransport.swift). The only network code.
        .target(
            name: "RemoteFolder",
            dependencies: ["JSONDocument", "TemporaryFiles", "XMLInput", .product(name: "Crypto", package: "swift-crypto")],
            path: "Sources/Folder/RemoteFolder"
        ),
        .target(
            name: "EnsemblesToolkit",
            dependencies: [
                "JSONDocument", "EnsembleModel", "DataModel", "EventCodecs", "FileWrappers", "SchemaValidation", "MergeEngine", "CloudFolder", "CoreDataStore",
                "SQLiteConnection", "DeviceState", "TICDS", "ParallelWork",
            ],
            path: "Sources/Operations/EnsemblesToolkit"
        ),
        .target(
            name: "SyntheticHistory",
            dependencies: ["JSONDocument", "EnsembleModel", "DataModel", "EventCodecs", "CloudFolder", "ProgressReporting", "ParallelWork"],
            path: "Sources/Folder/SyntheticHistory"
        ),
        .target(
            name: "SQLiteExport",
            dependencies: ["SQLiteConnection", "JSONDocument", "EnsembleModel", "DataModel", "MergeEngine", "TemporaryFiles"],
            path: "Sources/Tool/SQLiteExport"
        ),
        .target(
            name: "LogToolCore",
            // The operations layer, and what a command line adds around it: argument parsing,
            // the SQLite rendering of a state, the history generator, the publishing of a file,
            // the progress line, and the snapshot of a remote folder given as a URL.
            dependencies: [
                "EnsemblesToolkit", "SQLiteExport", "SyntheticHistory", "TemporaryFiles", "ProgressReporting", "RemoteFolder",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/Tool/LogToolCore"
        ),
        // The executable's allocator: jemalloc and its settings (no dependencies; see allocator.c).
        .target(name: "LogToolAllocator", path: "Sources/Tool/LogToolAllocator", linkerSettings: [.linkedLibrary("jemalloc")]),
        .executableTarget(
            name: "logtool",
            dependencies: ["LogToolCore", .target(name: "LogToolAllocator", condition: .when(traits: ["Jemalloc"]))],
            path: "Sources/Tool/logtool"
        ),
        // The library as a user sees it (Examples/): one short program per use, each importing
        // EnsemblesToolkit alone, with member import visibility on (the direction of the
        // language), so that everything the library hands back is usable through that one import.
        // Members of this package rather than a package of their own: a second package built the
        // toolkit and swift-crypto a second time in every test run (minutes on two cores).
        // scripts/check-examples.py runs them, and checks that they depend on nothing else and
        // that the library product holds the module they import.
    ]
        + ["MergeAFolder", "VerifyAFolder", "DeviceView", "RepairPlan"].map { name in
            Target.executableTarget(
                name: name, dependencies: ["EnsemblesToolkit"], path: "Examples/\(name)",
                // Outside the package's `package` access, as an app is.
                packageAccess: false, swiftSettings: [.enableUpcomingFeature("MemberImportVisibility")])
        } + [
        // A member of this package, so that it reaches the decoders' package-level entry points;
        // without the Fuzzing trait it only says how to run it (Fuzz/run.sh).
        .executableTarget(
            name: "FuzzDecoders",
            dependencies: [
                "JSONDocument", "EnsembleModel", "DataModel", "EventCodecs", "FileWrappers", "SchemaValidation", "KeyedArchive", "TICDS", "RemoteFolder",
            ],
            path: "Fuzz/Sources/FuzzDecoders",
            swiftSettings: [.define("FUZZING", .when(traits: ["Fuzzing"])), .unsafeFlags(["-parse-as-library"])]
        ),
        .target(name: "TestSupport", dependencies: ["JSONDocument", "EnsembleModel", "EventCodecs", "SyntheticHistory"], path: "Tests/TestSupport"),
        .testTarget(name: "JSONDocumentTests", dependencies: ["JSONDocument", "TestSupport"]),
        .testTarget(name: "DataModelTests", dependencies: ["JSONDocument", "DataModel"]),
        .testTarget(name: "KeyedArchiveTests", dependencies: ["JSONDocument", "KeyedArchive"]),
        .testTarget(name: "CoreDataStoreTests", dependencies: ["JSONDocument", "DataModel", "SQLiteConnection", "CoreDataStore"]),
        .testTarget(name: "EventCodecsTests", dependencies: ["JSONDocument", "Deflate", "EnsembleModel", "DataModel", "EventCodecs", "SchemaValidation", "TestSupport"]),
        .testTarget(name: "FileWrappersTests", dependencies: ["JSONDocument", "FileWrappers"]),
        .testTarget(
            name: "TICDSTests",
            dependencies: [
                "JSONDocument", "TICDS", "FileWrappers", "KeyedArchive", "SQLiteConnection", "EnsemblesToolkit", "SchemaValidation", "DataModel",
                "EnsembleModel", "MergeEngine", .product(name: "Crypto", package: "swift-crypto"),
            ]),
        .testTarget(name: "SchemaValidationTests", dependencies: ["JSONDocument", "SchemaValidation", "TestSupport"]),
        .testTarget(name: "MergeEngineTests", dependencies: ["JSONDocument", "EnsembleModel", "DataModel", "EventCodecs", "ModelValidation", "MergeEngine", "SyntheticHistory", "TestSupport"]),
        .testTarget(name: "CloudFolderTests", dependencies: ["EnsembleModel", "EventCodecs", "CloudFolder", "DataModel", "ModelValidation", "JSONDocument", "FileWrappers", "FileInput", "SyntheticHistory"]),
        .testTarget(name: "LogToolTests", dependencies: ["LogToolCore", "RemoteFolder", "SQLiteConnection", "DeviceState", "Deflate", "EnsemblesToolkit", "JSONDocument", "EnsembleModel", "CloudFolder", "SchemaValidation", "CSQLite", "TestSupport", "logtool", "DataModel", "CoreDataStore", "TemporaryFiles", "EventCodecs", "FileWrappers",
            .product(name: "Crypto", package: "swift-crypto"), .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .testTarget(name: "ConformanceTests", dependencies: [
            "JSONDocument", "KeyedArchive", "EnsembleModel", "DataModel", "EventCodecs", "SchemaValidation", "CloudFolder", "EnsemblesToolkit", "LogToolCore", "TestSupport",
            "TICDS", "RemoteFolder",
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
    ]
)
