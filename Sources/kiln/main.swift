import Foundation
import KilnKit

ProcessHeap.limitArenas()
Interruption.install()
exit(CommandLineTool(arguments: Array(CommandLine.arguments.dropFirst())).run())
