/*!
  \file CvodeOracle.cpp
  \brief CVODE reference integrator for mass-action networks; see CvodeOracle.hpp.
*/
#include "CvodeOracle.hpp"

#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_config.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunlinsol/sunlinsol_spgmr.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunmatrix/sunmatrix_sparse.h>
#if defined( MORULA_ORACLE_HAVE_KLU )
#include <sunlinsol/sunlinsol_klu.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace morula::test
{
namespace
{

using morula::ode::ReactionNetwork;

// -------------------------------------------------------------------------------------------------------
// The network compiled into flat arrays: reactant terms for the rates and the net stoichiometry
// (B - A, zero entries dropped) for the balances.
// -------------------------------------------------------------------------------------------------------
struct Term
{
    int species;
    int coefficient;
};

struct Change
{
    int species;
    double delta;
};

struct CompiledNetwork
{
    int n = 0;
    std::vector<double> k;
    std::vector<int> reactant_begin; // reaction r's reactants are reactants[reactant_begin[r] .. [r+1])
    std::vector<Term> reactants;
    std::vector<int> change_begin;
    std::vector<Change> changes;

    // CSC pattern of the Jacobian for KLU (columns = species differentiated by), diagonal included
    // because CVODE forms I - gamma J in place; slot[] maps each (reaction, reactant, change) triple,
    // in the order the Jacobian loop visits them, to its entry in the value array.
    std::vector<sunindextype> column_pointers;
    std::vector<sunindextype> row_indices;
    std::vector<sunindextype> slot;
    std::vector<sunindextype> diagonal_slot;
};

// Integer power by repeated multiplication: exact for the small orders of mass action and well defined
// for the slightly negative values an implicit integrator may produce.
inline double ipow( double x, int p )
{
    double r = 1.0;
    for ( int i = 0; i < p; ++i )
    {
        r *= x;
    }
    return r;
}

std::string where( const ReactionNetwork& network )
{
    return network.source.empty() ? std::string( "CvodeOracle" ) : "CvodeOracle (" + network.source + ")";
}

CompiledNetwork compile( const ReactionNetwork& network )
{
    CompiledNetwork c;
    c.n = network.species_count();
    if ( static_cast<int>( network.initial_state.size() ) != c.n )
    {
        throw std::invalid_argument( where( network ) + ": initial_state has " +
                                     std::to_string( network.initial_state.size() ) + " values for " +
                                     std::to_string( c.n ) + " species" );
    }
    for ( double x : network.initial_state )
    {
        if ( !std::isfinite( x ) )
        {
            throw std::invalid_argument( where( network ) + ": non-finite initial value" );
        }
    }
    c.reactant_begin.push_back( 0 );
    c.change_begin.push_back( 0 );
    for ( int r = 0; r < network.reaction_count(); ++r )
    {
        const auto& reaction = network.reactions[r];
        if ( !std::isfinite( reaction.rate_constant ) || reaction.rate_constant < 0.0 )
        {
            throw std::invalid_argument( where( network ) + ": reaction " + std::to_string( r ) +
                                         " has a negative or non-finite rate constant" );
        }
        // Accumulate per species so that a species listed twice on one side still means X^(a1 + a2).
        std::map<int, int> a;
        std::map<int, int> net;
        auto add = [&]( const std::vector<morula::ode::StoichiometryTerm>& side, int sign, bool reactant )
        {
            for ( const auto& term : side )
            {
                if ( term.species < 0 || term.species >= c.n || term.coefficient < 1 )
                {
                    throw std::invalid_argument( where( network ) + ": reaction " + std::to_string( r ) +
                                                 " has species " + std::to_string( term.species ) +
                                                 " with coefficient " + std::to_string( term.coefficient ) );
                }
                if ( reactant )
                {
                    a[term.species] += term.coefficient;
                }
                net[term.species] += sign * term.coefficient;
            }
        };
        add( reaction.reactants, -1, true );
        add( reaction.products, +1, false );
        c.k.push_back( reaction.rate_constant );
        for ( const auto& [s, p] : a )
        {
            c.reactants.push_back( { s, p } );
        }
        for ( const auto& [s, d] : net )
        {
            if ( d != 0 )
            {
                c.changes.push_back( { s, static_cast<double>( d ) } );
            }
        }
        c.reactant_begin.push_back( static_cast<int>( c.reactants.size() ) );
        c.change_begin.push_back( static_cast<int>( c.changes.size() ) );
    }
    return c;
}

void build_sparse_pattern( CompiledNetwork& c )
{
    std::vector<std::vector<sunindextype>> rows( c.n );
    for ( int j = 0; j < c.n; ++j )
    {
        rows[j].push_back( j );
    }
    const int m = static_cast<int>( c.k.size() );
    for ( int r = 0; r < m; ++r )
    {
        for ( int t = c.reactant_begin[r]; t < c.reactant_begin[r + 1]; ++t )
        {
            for ( int q = c.change_begin[r]; q < c.change_begin[r + 1]; ++q )
            {
                rows[c.reactants[t].species].push_back( c.changes[q].species );
            }
        }
    }
    c.column_pointers.assign( 1, 0 );
    c.row_indices.clear();
    for ( auto& column : rows )
    {
        std::sort( column.begin(), column.end() );
        column.erase( std::unique( column.begin(), column.end() ), column.end() );
        c.row_indices.insert( c.row_indices.end(), column.begin(), column.end() );
        c.column_pointers.push_back( static_cast<sunindextype>( c.row_indices.size() ) );
    }
    auto find = [&]( int i, int j )
    {
        const auto first = c.row_indices.begin() + c.column_pointers[j];
        const auto last = c.row_indices.begin() + c.column_pointers[j + 1];
        return static_cast<sunindextype>( std::lower_bound( first, last, i ) - c.row_indices.begin() );
    };
    c.slot.clear();
    for ( int r = 0; r < m; ++r )
    {
        for ( int t = c.reactant_begin[r]; t < c.reactant_begin[r + 1]; ++t )
        {
            for ( int q = c.change_begin[r]; q < c.change_begin[r + 1]; ++q )
            {
                c.slot.push_back( find( c.changes[q].species, c.reactants[t].species ) );
            }
        }
    }
    c.diagonal_slot.resize( c.n );
    for ( int j = 0; j < c.n; ++j )
    {
        c.diagonal_slot[j] = find( j, j );
    }
}

void rhs( const CompiledNetwork& c, const double* x, double* dx )
{
    std::fill( dx, dx + c.n, 0.0 );
    const int m = static_cast<int>( c.k.size() );
    for ( int r = 0; r < m; ++r )
    {
        double rate = c.k[r];
        for ( int t = c.reactant_begin[r]; t < c.reactant_begin[r + 1]; ++t )
        {
            rate *= ipow( x[c.reactants[t].species], c.reactants[t].coefficient );
        }
        for ( int q = c.change_begin[r]; q < c.change_begin[r + 1]; ++q )
        {
            dx[c.changes[q].species] += c.changes[q].delta * rate;
        }
    }
}

// d rate_r / d x_{s_t} = k a_t x_{s_t}^(a_t - 1) prod_{u != t} x_{s_u}^(a_u), formed without dividing
// by x_{s_t}. `visit( t, partial )` receives each reactant term's partial derivative.
template <class Visit>
void rate_partials( const CompiledNetwork& c, const double* x, int r, Visit&& visit )
{
    for ( int t = c.reactant_begin[r]; t < c.reactant_begin[r + 1]; ++t )
    {
        const auto& term = c.reactants[t];
        double partial = c.k[r] * term.coefficient * ipow( x[term.species], term.coefficient - 1 );
        for ( int u = c.reactant_begin[r]; u < c.reactant_begin[r + 1]; ++u )
        {
            if ( u != t )
            {
                partial *= ipow( x[c.reactants[u].species], c.reactants[u].coefficient );
            }
        }
        visit( t, partial );
    }
}

// Row-major dense Jacobian into j (n * n, zeroed here).
void dense_jacobian( const CompiledNetwork& c, const double* x, double* j )
{
    std::fill( j, j + static_cast<std::size_t>( c.n ) * c.n, 0.0 );
    const int m = static_cast<int>( c.k.size() );
    for ( int r = 0; r < m; ++r )
    {
        rate_partials( c, x, r,
                       [&]( int t, double partial )
                       {
                           const int column = c.reactants[t].species;
                           for ( int q = c.change_begin[r]; q < c.change_begin[r + 1]; ++q )
                           {
                               j[static_cast<std::size_t>( c.changes[q].species ) * c.n + column] +=
                                   c.changes[q].delta * partial;
                           }
                       } );
    }
}

// -------------------------------------------------------------------------------------------------------
// CVODE callbacks
// -------------------------------------------------------------------------------------------------------
int cv_rhs( sunrealtype, N_Vector y, N_Vector ydot, void* user_data )
{
    const auto& c = *static_cast<const CompiledNetwork*>( user_data );
    rhs( c, N_VGetArrayPointer( y ), N_VGetArrayPointer( ydot ) );
    return 0;
}

int cv_dense_jacobian( sunrealtype, N_Vector y, N_Vector, SUNMatrix jac, void* user_data, N_Vector, N_Vector,
                       N_Vector )
{
    const auto& c = *static_cast<const CompiledNetwork*>( user_data );
    const double* x = N_VGetArrayPointer( y );
    SUNMatZero( jac );
    const int m = static_cast<int>( c.k.size() );
    for ( int r = 0; r < m; ++r )
    {
        rate_partials( c, x, r,
                       [&]( int t, double partial )
                       {
                           double* column = SUNDenseMatrix_Column( jac, c.reactants[t].species );
                           for ( int q = c.change_begin[r]; q < c.change_begin[r + 1]; ++q )
                           {
                               column[c.changes[q].species] += c.changes[q].delta * partial;
                           }
                       } );
    }
    return 0;
}

int cv_sparse_jacobian( sunrealtype, N_Vector y, N_Vector, SUNMatrix jac, void* user_data, N_Vector, N_Vector,
                        N_Vector )
{
    const auto& c = *static_cast<const CompiledNetwork*>( user_data );
    const double* x = N_VGetArrayPointer( y );
    // The pattern is rewritten every call because SUNMatScaleAddI may have been applied to this matrix.
    std::copy( c.column_pointers.begin(), c.column_pointers.end(), SUNSparseMatrix_IndexPointers( jac ) );
    std::copy( c.row_indices.begin(), c.row_indices.end(), SUNSparseMatrix_IndexValues( jac ) );
    double* values = SUNSparseMatrix_Data( jac );
    std::fill( values, values + c.row_indices.size(), 0.0 );
    std::size_t s = 0;
    const int m = static_cast<int>( c.k.size() );
    for ( int r = 0; r < m; ++r )
    {
        rate_partials( c, x, r,
                       [&]( int, double partial )
                       {
                           for ( int q = c.change_begin[r]; q < c.change_begin[r + 1]; ++q )
                           {
                               values[c.slot[s++]] += c.changes[q].delta * partial;
                           }
                       } );
    }
    return 0;
}

int cv_jacobian_times( N_Vector v, N_Vector jv, sunrealtype, N_Vector y, N_Vector, void* user_data, N_Vector )
{
    const auto& c = *static_cast<const CompiledNetwork*>( user_data );
    const double* x = N_VGetArrayPointer( y );
    const double* vv = N_VGetArrayPointer( v );
    double* out = N_VGetArrayPointer( jv );
    std::fill( out, out + c.n, 0.0 );
    const int m = static_cast<int>( c.k.size() );
    for ( int r = 0; r < m; ++r )
    {
        double drate = 0.0; // directional derivative of rate r along v
        rate_partials( c, x, r, [&]( int t, double partial ) { drate += partial * vv[c.reactants[t].species]; } );
        for ( int q = c.change_begin[r]; q < c.change_begin[r + 1]; ++q )
        {
            out[c.changes[q].species] += c.changes[q].delta * drate;
        }
    }
    return 0;
}

std::string flag_text( const char* function, long flag )
{
    char* name = CVodeGetReturnFlagName( flag ); // malloc'ed by SUNDIALS
    std::string text = std::string( function ) + " failed with flag " + std::to_string( flag );
    if ( name != nullptr )
    {
        text += " (" + std::string( name ) + ")";
        std::free( name );
    }
    return text;
}

// Owns every SUNDIALS object of one integration, so that a throw anywhere frees them all.
struct CvodeSession
{
    SUNContext context = nullptr;
    N_Vector y = nullptr;
    SUNMatrix matrix = nullptr;
    SUNLinearSolver solver = nullptr;
    void* memory = nullptr;

    CvodeSession()
    {
        if ( SUNContext_Create( nullptr, &context ) != 0 )
        {
            throw std::runtime_error( "CvodeOracle: SUNContext_Create failed" );
        }
    }
    ~CvodeSession()
    {
        if ( memory != nullptr )
        {
            CVodeFree( &memory );
        }
        if ( solver != nullptr )
        {
            SUNLinSolFree( solver );
        }
        if ( matrix != nullptr )
        {
            SUNMatDestroy( matrix );
        }
        if ( y != nullptr )
        {
            N_VDestroy( y );
        }
        SUNContext_Free( &context );
    }
    CvodeSession( const CvodeSession& ) = delete;
    CvodeSession& operator=( const CvodeSession& ) = delete;
};

void check( int flag, const char* function, const std::string& context )
{
    if ( flag < 0 )
    {
        throw std::runtime_error( context + ": " + flag_text( function, flag ) );
    }
}

} // namespace

bool cvode_has_klu()
{
#if defined( MORULA_ORACLE_HAVE_KLU )
    return true;
#else
    return false;
#endif
}

std::string sundials_version()
{
    return SUNDIALS_VERSION;
}

std::vector<double> mass_action_rhs( const ReactionNetwork& network, const std::vector<double>& x )
{
    const auto c = compile( network );
    if ( static_cast<int>( x.size() ) != c.n )
    {
        throw std::invalid_argument( where( network ) + ": state size does not match the species count" );
    }
    std::vector<double> dx( c.n );
    rhs( c, x.data(), dx.data() );
    return dx;
}

std::vector<double> mass_action_jacobian( const ReactionNetwork& network, const std::vector<double>& x )
{
    const auto c = compile( network );
    if ( static_cast<int>( x.size() ) != c.n )
    {
        throw std::invalid_argument( where( network ) + ": state size does not match the species count" );
    }
    std::vector<double> j( static_cast<std::size_t>( c.n ) * c.n );
    dense_jacobian( c, x.data(), j.data() );
    return j;
}

std::vector<std::vector<double>> cvode_solve( const ReactionNetwork& network, const std::vector<double>& sample_times,
                                              const OracleOptions& options )
{
    CvodeSettings settings;
    settings.relative_tolerance = options.relative_tolerance;
    settings.absolute_tolerance = options.absolute_tolerance;
    settings.max_steps = options.max_steps;
    settings.linear_solver = CvodeLinearSolver::dense;
    return cvode_integrate( network, sample_times, settings );
}

std::vector<std::vector<double>> cvode_integrate( const ReactionNetwork& network,
                                                  const std::vector<double>& sample_times,
                                                  const CvodeSettings& settings, CvodeStatistics* statistics )
{
    const std::string context = where( network );
    CompiledNetwork c = compile( network );
    for ( std::size_t i = 0; i < sample_times.size(); ++i )
    {
        if ( !std::isfinite( sample_times[i] ) || sample_times[i] < 0.0 ||
             ( i > 0 && sample_times[i] < sample_times[i - 1] ) )
        {
            throw std::invalid_argument( context + ": sample times must be finite, >= 0 and non-decreasing (entry " +
                                         std::to_string( i ) + ")" );
        }
    }
    if ( !( settings.relative_tolerance > 0.0 ) || !( settings.absolute_tolerance > 0.0 ) )
    {
        throw std::invalid_argument( context + ": tolerances must be positive" );
    }

    std::vector<std::vector<double>> samples;
    samples.reserve( sample_times.size() );
    if ( c.n == 0 )
    {
        samples.assign( sample_times.size(), std::vector<double>() );
        return samples;
    }

    CvodeSession session;
    session.y = N_VNew_Serial( c.n, session.context );
    if ( session.y == nullptr )
    {
        throw std::runtime_error( context + ": N_VNew_Serial failed" );
    }
    std::copy( network.initial_state.begin(), network.initial_state.end(), N_VGetArrayPointer( session.y ) );

    session.memory = CVodeCreate( CV_BDF, session.context );
    if ( session.memory == nullptr )
    {
        throw std::runtime_error( context + ": CVodeCreate failed" );
    }
    const double t0 = 0.0;
    check( CVodeInit( session.memory, cv_rhs, t0, session.y ), "CVodeInit", context );
    check( CVodeSStolerances( session.memory, settings.relative_tolerance, settings.absolute_tolerance ),
           "CVodeSStolerances", context );
    check( CVodeSetUserData( session.memory, &c ), "CVodeSetUserData", context );
    check( CVodeSetMaxNumSteps( session.memory, settings.max_steps ), "CVodeSetMaxNumSteps", context );

    switch ( settings.linear_solver )
    {
    case CvodeLinearSolver::dense:
        session.matrix = SUNDenseMatrix( c.n, c.n, session.context );
        session.solver = SUNLinSol_Dense( session.y, session.matrix, session.context );
        if ( session.matrix == nullptr || session.solver == nullptr )
        {
            throw std::runtime_error( context + ": dense matrix or solver creation failed" );
        }
        check( CVodeSetLinearSolver( session.memory, session.solver, session.matrix ), "CVodeSetLinearSolver",
               context );
        check( CVodeSetJacFn( session.memory, cv_dense_jacobian ), "CVodeSetJacFn", context );
        break;
    case CvodeLinearSolver::klu:
    {
#if defined( MORULA_ORACLE_HAVE_KLU )
        build_sparse_pattern( c );
        session.matrix = SUNSparseMatrix( c.n, c.n, static_cast<sunindextype>( c.row_indices.size() ), CSC_MAT,
                                          session.context );
        session.solver = SUNLinSol_KLU( session.y, session.matrix, session.context );
        if ( session.matrix == nullptr || session.solver == nullptr )
        {
            throw std::runtime_error( context + ": sparse matrix or KLU solver creation failed" );
        }
        check( CVodeSetLinearSolver( session.memory, session.solver, session.matrix ), "CVodeSetLinearSolver",
               context );
        check( CVodeSetJacFn( session.memory, cv_sparse_jacobian ), "CVodeSetJacFn", context );
        break;
#else
        throw std::runtime_error( context + ": this SUNDIALS has no KLU linear solver" );
#endif
    }
    case CvodeLinearSolver::spgmr:
        session.solver = SUNLinSol_SPGMR( session.y, SUN_PREC_NONE, 0, session.context );
        if ( session.solver == nullptr )
        {
            throw std::runtime_error( context + ": SPGMR solver creation failed" );
        }
        check( CVodeSetLinearSolver( session.memory, session.solver, nullptr ), "CVodeSetLinearSolver", context );
        check( CVodeSetJacTimes( session.memory, nullptr, cv_jacobian_times ), "CVodeSetJacTimes", context );
        break;
    }

    double t = t0;
    for ( double tout : sample_times )
    {
        if ( tout > t0 )
        {
            const int flag = CVode( session.memory, tout, session.y, &t, CV_NORMAL );
            if ( flag < 0 )
            {
                throw std::runtime_error( context + ": " + flag_text( "CVode", flag ) + " at t = " +
                                          std::to_string( t ) + " on the way to " + std::to_string( tout ) );
            }
            const double* y = N_VGetArrayPointer( session.y );
            samples.emplace_back( y, y + c.n );
        }
        else
        {
            samples.push_back( network.initial_state );
        }
    }

    if ( statistics != nullptr )
    {
        long value = 0;
        CVodeGetNumSteps( session.memory, &value );
        statistics->steps = value;
        CVodeGetNumRhsEvals( session.memory, &value );
        statistics->rhs_evaluations = value;
        if ( settings.linear_solver == CvodeLinearSolver::spgmr )
        {
            CVodeGetNumJtimesEvals( session.memory, &value );
        }
        else
        {
            CVodeGetNumJacEvals( session.memory, &value );
        }
        statistics->jacobian_evaluations = value;
        CVodeGetNumLinSolvSetups( session.memory, &value );
        statistics->linear_setups = value;
        CVodeGetNumErrTestFails( session.memory, &value );
        statistics->error_test_failures = value;
        CVodeGetNumNonlinSolvIters( session.memory, &value );
        statistics->nonlinear_iterations = value;
        CVodeGetNumNonlinSolvConvFails( session.memory, &value );
        statistics->nonlinear_convergence_failures = value;
    }
    return samples;
}

// -------------------------------------------------------------------------------------------------------
// LASSIE / cupSODA folder reader
// -------------------------------------------------------------------------------------------------------
namespace
{

struct Token
{
    std::string text;
    int line;
};

std::vector<std::vector<Token>> read_rows( const std::filesystem::path& path )
{
    std::ifstream in( path );
    if ( !in )
    {
        throw std::runtime_error( "read_lassie_folder: cannot open " + path.string() );
    }
    std::vector<std::vector<Token>> rows;
    std::string line;
    int number = 0;
    while ( std::getline( in, line ) )
    {
        ++number;
        std::istringstream words( line );
        std::vector<Token> row;
        std::string word;
        while ( words >> word )
        {
            row.push_back( { word, number } );
        }
        // Blank lines (trailing newlines, spacing) carry nothing in this format.
        if ( !row.empty() )
        {
            rows.push_back( std::move( row ) );
        }
    }
    return rows;
}

std::vector<Token> flatten( const std::vector<std::vector<Token>>& rows )
{
    std::vector<Token> all;
    for ( const auto& row : rows )
    {
        all.insert( all.end(), row.begin(), row.end() );
    }
    return all;
}

double to_double( const Token& token, const std::filesystem::path& path )
{
    const char* begin = token.text.c_str();
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod( begin, &end );
    if ( end == begin || *end != '\0' || errno == ERANGE || !std::isfinite( value ) )
    {
        throw std::runtime_error( "read_lassie_folder: " + path.string() + " line " + std::to_string( token.line ) +
                                  ": '" + token.text + "' is not a finite number" );
    }
    return value;
}

// Stoichiometries are integers; some generators write them as "1.0", which is accepted.
int to_coefficient( const Token& token, const std::filesystem::path& path )
{
    const double value = to_double( token, path );
    if ( value < 0.0 || value != std::floor( value ) || value > 1000.0 )
    {
        throw std::runtime_error( "read_lassie_folder: " + path.string() + " line " + std::to_string( token.line ) +
                                  ": '" + token.text + "' is not a stoichiometric coefficient (integer 0..1000)" );
    }
    return static_cast<int>( value );
}

std::vector<std::vector<int>> read_matrix( const std::filesystem::path& path )
{
    std::vector<std::vector<int>> matrix;
    for ( const auto& row : read_rows( path ) )
    {
        std::vector<int> values;
        for ( const auto& token : row )
        {
            values.push_back( to_coefficient( token, path ) );
        }
        if ( !matrix.empty() && values.size() != matrix.front().size() )
        {
            throw std::runtime_error( "read_lassie_folder: " + path.string() + " line " +
                                      std::to_string( row.front().line ) + " has " + std::to_string( values.size() ) +
                                      " columns, the first row " + std::to_string( matrix.front().size() ) );
        }
        matrix.push_back( std::move( values ) );
    }
    return matrix;
}

std::vector<double> read_numbers( const std::filesystem::path& path )
{
    std::vector<double> values;
    for ( const auto& token : flatten( read_rows( path ) ) )
    {
        values.push_back( to_double( token, path ) );
    }
    return values;
}

} // namespace

LassieModel read_lassie_folder( const std::string& directory )
{
    namespace fs = std::filesystem;
    const fs::path dir( directory );
    if ( !fs::is_directory( dir ) )
    {
        throw std::runtime_error( "read_lassie_folder: " + directory + " is not a directory" );
    }
    const auto left = read_matrix( dir / "left_side" );
    const auto right = read_matrix( dir / "right_side" );
    const auto rates = read_numbers( dir / "c_vector" );
    // LASSIE names the initial state M_0, cupSODA MX_0; Morula's writer uses LASSIE's name.
    const auto x0 = read_numbers( std::filesystem::exists( dir / "M_0" ) ? dir / "M_0" : dir / "MX_0" );
    const auto times = read_numbers( dir / "t_vector" );

    const std::size_t m = left.size();
    const std::size_t n = left.empty() ? 0 : left.front().size();
    if ( m == 0 || n == 0 )
    {
        throw std::runtime_error( "read_lassie_folder: " + ( dir / "left_side" ).string() + " is empty" );
    }
    if ( right.size() != m || right.front().size() != n )
    {
        throw std::runtime_error( "read_lassie_folder: right_side is " + std::to_string( right.size() ) + " x " +
                                  std::to_string( right.empty() ? 0 : right.front().size() ) +
                                  ", left_side " + std::to_string( m ) + " x " + std::to_string( n ) );
    }
    if ( rates.size() != m )
    {
        throw std::runtime_error( "read_lassie_folder: c_vector has " + std::to_string( rates.size() ) +
                                  " values for " + std::to_string( m ) + " reactions" );
    }
    if ( x0.size() != n )
    {
        throw std::runtime_error( "read_lassie_folder: MX_0 has " + std::to_string( x0.size() ) + " values for " +
                                  std::to_string( n ) + " species" );
    }
    if ( times.empty() )
    {
        throw std::runtime_error( "read_lassie_folder: t_vector is empty" );
    }
    for ( std::size_t i = 0; i < times.size(); ++i )
    {
        if ( times[i] < 0.0 || ( i > 0 && times[i] < times[i - 1] ) )
        {
            throw std::runtime_error( "read_lassie_folder: t_vector must be >= 0 and non-decreasing (entry " +
                                      std::to_string( i ) + ")" );
        }
    }
    for ( std::size_t r = 0; r < m; ++r )
    {
        if ( rates[r] < 0.0 )
        {
            throw std::runtime_error( "read_lassie_folder: c_vector entry " + std::to_string( r ) + " is negative" );
        }
    }
    for ( std::size_t s = 0; s < n; ++s )
    {
        if ( x0[s] < 0.0 )
        {
            throw std::runtime_error( "read_lassie_folder: MX_0 entry " + std::to_string( s ) + " is negative" );
        }
    }

    LassieModel model;
    auto& network = model.network;
    network.source = directory;
    if ( fs::exists( dir / "alphabet" ) )
    {
        for ( const auto& token : flatten( read_rows( dir / "alphabet" ) ) )
        {
            network.species_names.push_back( token.text );
        }
        if ( network.species_names.size() != n )
        {
            throw std::runtime_error( "read_lassie_folder: alphabet has " +
                                      std::to_string( network.species_names.size() ) + " names for " +
                                      std::to_string( n ) + " species" );
        }
    }
    else
    {
        for ( std::size_t s = 0; s < n; ++s )
        {
            network.species_names.push_back( "S" + std::to_string( s ) );
        }
    }
    for ( std::size_t r = 0; r < m; ++r )
    {
        morula::ode::Reaction reaction;
        reaction.rate_constant = rates[r];
        for ( std::size_t s = 0; s < n; ++s )
        {
            if ( left[r][s] > 0 )
            {
                reaction.reactants.push_back( { static_cast<int>( s ), left[r][s] } );
            }
            if ( right[r][s] > 0 )
            {
                reaction.products.push_back( { static_cast<int>( s ), right[r][s] } );
            }
        }
        network.reactions.push_back( std::move( reaction ) );
    }
    network.initial_state = x0;
    network.settings.sample_times = times;
    if ( fs::exists( dir / "cs_vector" ) )
    {
        for ( double v : read_numbers( dir / "cs_vector" ) )
        {
            if ( v < 0.0 || v != std::floor( v ) || v >= static_cast<double>( n ) )
            {
                throw std::runtime_error( "read_lassie_folder: cs_vector entry " + std::to_string( v ) +
                                          " is not a species index" );
            }
            network.settings.saved_species.push_back( static_cast<int>( v ) );
        }
    }
    model.sample_times = times;
    return model;
}

} // namespace morula::test
