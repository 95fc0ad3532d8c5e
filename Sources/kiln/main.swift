import Foundation
import KilnC
import KilnKit

StandardDescriptors.reserve()
ProcessHeap.limitArenas()
Interruption.install()
exit(CommandLineTool(arguments: Array(CommandLine.arguments.dropFirst())).run().rawValue)
