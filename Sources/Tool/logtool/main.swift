import Foundation
import LogToolCore

exit(LogTool.runAsExecutable(arguments: Array(CommandLine.arguments.dropFirst())))
