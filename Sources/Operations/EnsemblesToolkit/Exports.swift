// `import EnsemblesToolkit` is the one import a library user needs: the operations hand back
// types of the modules below (a merged state, JSON documents and errors, events, models), and
// with Swift's member import visibility a caller could not use their members without importing
// each defining module. Re-exported here, as swift-nio's Exports.swift does for its core.
@_exported import CloudFolder
@_exported import CoreDataStore
@_exported import DataModel
@_exported import EnsembleModel
@_exported import EventCodecs
@_exported import FileWrappers
@_exported import JSONDocument
@_exported import MergeEngine
@_exported import SchemaValidation
