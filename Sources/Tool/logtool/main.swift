import Foundation
import LogToolCore

exit(LogTool.run(arguments: Array(CommandLine.arguments.dropFirst())))
