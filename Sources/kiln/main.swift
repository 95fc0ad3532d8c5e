import Foundation
import KilnKit

Interruption.install()
exit(CommandLineTool(arguments: Array(CommandLine.arguments.dropFirst())).run())
