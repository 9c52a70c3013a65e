//! A function's instructions in Intel syntax, calls named by the functions they reach.

use super::binary::LoadedObject;

/// Each instruction of `code` (a function of `object` at file address `address`): its address and
/// its text. `Err` says why there is no disassembly on this architecture.
#[cfg(target_arch = "x86_64")]
pub(crate) fn disassemble(
    object: &LoadedObject,
    code: &[u8],
    address: u64,
) -> Result<Vec<(u64, String)>, String> {
    use iced_x86::{Decoder, DecoderOptions, Formatter, IntelFormatter};
    let instructions: Vec<iced_x86::Instruction> =
        Decoder::with_ip(64, code, address, DecoderOptions::NONE)
            .into_iter()
            .collect();
    let targets = instructions
        .iter()
        .filter_map(|i| {
            let target = i.near_branch_target();
            let function = object.function_starting_at(target)?;
            Some((target, function.name.clone()))
        })
        .collect();
    let mut formatter = IntelFormatter::with_options(Some(Box::new(CallTargets(targets))), None);
    Ok(instructions
        .iter()
        .map(|instruction| {
            let mut text = String::new();
            formatter.format(instruction, &mut text);
            (instruction.ip(), text)
        })
        .collect())
}

#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn disassemble(
    _object: &LoadedObject,
    _code: &[u8],
    _address: u64,
) -> Result<Vec<(u64, String)>, String> {
    Err(format!(
        "annotated disassembly is not available on {}: only x86-64 is decoded",
        std::env::consts::ARCH
    ))
}

/// Names the targets of calls and jumps that start a function.
#[cfg(target_arch = "x86_64")]
struct CallTargets(std::collections::HashMap<u64, String>);

#[cfg(target_arch = "x86_64")]
impl iced_x86::SymbolResolver for CallTargets {
    fn symbol(
        &mut self,
        _instruction: &iced_x86::Instruction,
        _operand: u32,
        _instruction_operand: Option<u32>,
        address: u64,
        _address_size: u32,
    ) -> Option<iced_x86::SymbolResult<'_>> {
        let name = self.0.get(&address)?;
        Some(iced_x86::SymbolResult::with_str(address, name))
    }
}
