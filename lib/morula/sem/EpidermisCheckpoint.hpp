/*!
  \file EpidermisCheckpoint.hpp
  \brief Checkpoint and restart of sem::Epidermis: the parameter table a restart must match and the
  definitions of Epidermis::checkpoint and Epidermis::restart (included by Epidermis.hpp).

  A checkpoint holds, besides Morula's header:
  - "scalar": "float" or "double";
  - "parameters/<name>": every parameter of EpidermisParameters and the box (numbers as float64, the
    choices as text), so that a restart with other parameters is refused, naming the parameter;
  - "step", "divisions": the driver's counters (growth events fall on multiples of the interval);
  - "tissue/...": elements and cells at their capacities, species, centres and adhesion (Tissue);
  - "mechanics/...": the element list's state, bound and grid box, and the positions it was built from;
  - "genes/...": the centre list's state and the centres it was built from.
  The model draws no random numbers (the seed of `monolayer` only places the initial cells), so there is
  no generator state. advance()'s chunk schedule is not saved: it decides how steps are launched, never
  their results.
*/
#ifndef MORULA_SEM_EPIDERMISCHECKPOINT_HPP
#define MORULA_SEM_EPIDERMISCHECKPOINT_HPP

#include <morula/core/Box.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/sem/Epidermis.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace morula::sem
{
namespace detail
{

//! One parameter of a run: a number or a choice (text), and whether it changes the run of this model.
struct EpidermisParameterEntry
{
    std::string name;
    double value = 0;
    std::string text; //!< the choice's name; empty for a number
    bool matters = true;
};

//! Every parameter of an epidermis run, with the box, under the names its checkpoint uses.
template <class Scalar>
std::vector<EpidermisParameterEntry> epidermis_parameter_table( const EpidermisParameters& p,
                                                                const core::Box<Scalar>& box )
{
    const bool genes = p.model != EpidermisModel::movement;
    const bool growth = p.model == EpidermisModel::full;
    std::vector<EpidermisParameterEntry> t;
    auto number = [&]( const std::string& name, double v, bool matters ) { t.push_back( { name, v, "", matters } ); };
    auto choice = [&]( const std::string& name, const char* v, bool matters ) { t.push_back( { name, 0, v, matters } ); };
    auto morse = [&]( const std::string& name, const MorsePotential& m ) {
        number( name + ".U0", m.U0, true );
        number( name + ".xi1", m.xi1, true );
        number( name + ".W0", m.W0, true );
        number( name + ".xi2", m.xi2, true );
    };
    auto hill = [&]( const std::string& name, const ode::HillTerm& h ) {
        number( name + ".a", h.a, genes );
        number( name + ".b", h.b, genes );
        number( name + ".c", h.c, genes );
        number( name + ".h", h.h, genes );
    };
    choice( "model", to_string( p.model ), true );
    morse( "mechanics.intra", p.mechanics.intra );
    morse( "mechanics.inter", p.mechanics.inter );
    morse( "mechanics.membrane", p.mechanics.membrane );
    number( "mechanics.inter_cutoff", p.mechanics.inter_cutoff, true );
    number( "mechanics.time_step", p.mechanics.time_step, true );
    choice( "mechanics.integrator", to_string( p.mechanics.integrator ), true );
    // The list's order is the forces' sum order. p is the driver's (resolved) parameters; an unset skin
    // cannot reach here, and would be written as NaN and refused.
    number( "mechanics.skin_factor", p.mechanics.skin_factor.value_or( std::nan( "" ) ), true );
    const auto& g = p.genes.genes;
    const std::initializer_list<std::pair<const char*, double>> rates{
        { "ka", g.ka }, { "kd", g.kd }, { "dB", g.dB }, { "dN", g.dN },
        { "dD", g.dD }, { "dO", g.dO }, { "dV", g.dV }, { "dM", g.dM } };
    for ( const auto& [name, v] : rates )
        number( std::string( "genes." ) + name, v, genes );
    hill( "genes.BN", g.BN );
    hill( "genes.ON", g.ON );
    hill( "genes.ND", g.ND );
    hill( "genes.VO", g.VO );
    hill( "genes.GO", g.GO );
    hill( "genes.OV", g.OV );
    hill( "genes.AV", g.AV );
    hill( "genes.OM", g.OM );
    number( "genes.tgf_beta", p.genes.tgf_beta, genes );
    number( "genes.neighbor_cutoff", p.genes.neighbor_cutoff, genes );
    choice( "genes.coupling", p.genes.coupling == NeighborCoupling::distribute ? "distribute" : "average", genes );
    number( "genes.neighbor_skin", p.genes.neighbor_skin, genes );
    number( "growth.interval", p.growth.interval, growth );
    number( "growth.division_elements", p.growth.division_elements, growth );
    choice( "growth.rule", p.growth.rule == GrowthRule::low_delta ? "low_delta" : "basal_state", growth );
    number( "growth.delta_threshold", p.growth.delta_threshold, growth && p.growth.rule == GrowthRule::low_delta );
    for ( int d = 0; d < 3; ++d )
    {
        const std::string axis( 1, "xyz"[d] );
        number( "box.lo." + axis, static_cast<double>( box.lo[d] ), true );
        number( "box.hi." + axis, static_cast<double>( box.hi[d] ), true );
        const auto b = box.boundary[d];
        choice( "box.boundary." + axis,
                b == core::Boundary::periodic ? "periodic" : b == core::Boundary::open ? "open" : "closed", true );
    }
    return t;
}

//! v with 6 digits, or as many more as it takes to read back as v ("0.01", not 0.010000000000000000208;
//! 0.10000000000000001 next to 0.1): two different values never print alike.
inline std::string parameter_text( double v )
{
    char buffer[32];
    for ( int digits = 6; digits <= 17; ++digits )
    {
        std::snprintf( buffer, sizeof( buffer ), "%.*g", digits, v );
        if ( std::strtod( buffer, nullptr ) == v )
            break;
    }
    return buffer;
}

} // namespace detail

template <class Scalar, class MemorySpace>
void Epidermis<Scalar, MemorySpace>::checkpoint( io::CheckpointWriter& out ) const
{
    typename MemorySpace::execution_space().fence();
    out.put_text( "scalar", sizeof( Scalar ) == 4 ? "float" : "double" );
    for ( const auto& e : detail::epidermis_parameter_table( m_params, m_mechanics.box() ) )
    {
        if ( e.text.empty() )
            out.put_scalar( "parameters/" + e.name, e.value );
        else
            out.put_text( "parameters/" + e.name, e.text );
    }
    out.put_scalar( "step", this->steps_done() );
    out.put_scalar( "divisions", m_divisions );
    m_tissue.checkpoint( out, "tissue/" );
    m_mechanics.checkpoint( out, "mechanics/" );
    m_genes.checkpoint( out, "genes/" );
}

template <class Scalar, class MemorySpace>
void Epidermis<Scalar, MemorySpace>::restart( const io::CheckpointReader& in )
{
    const char* precision = sizeof( Scalar ) == 4 ? "float" : "double";
    const std::string saved = in.text( "scalar" );
    if ( saved != precision )
        in.fail( "written by a " + saved + " run; this run is " + precision + " (the precision must match)" );
    for ( const auto& e : detail::epidermis_parameter_table( m_params, m_mechanics.box() ) )
    {
        if ( !e.matters )
            continue;
        const std::string key = "parameters/" + e.name;
        const std::string was = e.text.empty() ? detail::parameter_text( in.scalar<double>( key ) ) : in.text( key );
        const std::string is = e.text.empty() ? detail::parameter_text( e.value ) : e.text;
        const bool same = e.text.empty() ? in.scalar<double>( key ) == e.value : was == is;
        if ( !same )
            in.fail( "parameter '" + e.name + "' is " + was + " in the checkpoint but " + is +
                     " in this run (restart with the checkpointed run's parameters)" );
    }
    const long long step = in.scalar<long long>( "step" );
    const long long divisions = in.scalar<long long>( "divisions" );
    if ( step < 0 || divisions < 0 )
        in.fail( core::detail::concat( "'step' = ", step, " and 'divisions' = ", divisions, " (expected >= 0)" ) );
    using exec_space = typename MemorySpace::execution_space;
    const exec_space exec;
    m_tissue.restart( in, "tissue/" );
    m_mechanics.restart( exec, in, m_tissue, "mechanics/" );
    m_genes.restart( exec, in, m_tissue, "genes/" );
    this->set_steps_done( step );
    m_divisions = divisions;
    // Chunks recorded before froze the old arrays; the schedule starts afresh (it never changes results).
    m_graphs.clear();
    m_signature.clear();
    m_chunk_cap = 8;
    m_backoff = 0;
    m_plain_until = 0;
}

} // namespace morula::sem

#endif
